/* The header the CMcpStdio module wraps. Its directory comes from
 * `pkg-config --cflags mcp_stdio` (SwiftPM reads it for the system library
 * target), or from -I when the module map is used directly. */
#include <mcp_stdio.h>
