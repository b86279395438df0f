// swift-tools-version:5.5
// The C library as a Swift module: a system library target over the installed
// mcp_stdio (found with pkg-config). There is no Swift code to build here:
// `import CMcpStdio` gives the C API of include/mcp_stdio.h as it is.
import PackageDescription

let package = Package(
    name: "McpStdio",
    products: [
        .library(name: "CMcpStdio", targets: ["CMcpStdio"]),
    ],
    targets: [
        .systemLibrary(
            name: "CMcpStdio",
            path: "Sources/CMcpStdio",
            pkgConfig: "mcp_stdio",
            providers: []
        ),
    ]
)
