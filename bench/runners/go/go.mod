module mcpstdio.invalid/bench/go-runner

go 1.19
