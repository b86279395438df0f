module example.com/mcpstdio-consumer

go 1.19

// The lines docs/install.md and bindings/go/README.md show: there is no
// module proxy for the binding, so `replace` points at a checkout.
require github.com/mcp-stdio/mcp-stdio/bindings/go v0.0.0

replace github.com/mcp-stdio/mcp-stdio/bindings/go => ../../../bindings/go
