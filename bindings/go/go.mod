module github.com/mcp-stdio/mcp-stdio/bindings/go

go 1.19
