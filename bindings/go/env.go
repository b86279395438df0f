package mcpstdio

import (
	"os"
	"strings"
)

// defaultEnvNames are the variables the C library's MCP_ENV_DEFAULT passes
// on to a spawned server (the MCP SDKs' default list, with the locale, TZ
// and TMPDIR).
var defaultEnvNames = []string{
	"HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER",
	"LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR",
}

// DefaultEnv returns the environment the C library gives a spawned server
// by default (MCP_ENV_DEFAULT), for exec.Cmd.Env: the host's HOME, LOGNAME,
// PATH, SHELL, TERM, USER, LANG, LC_ALL, LC_CTYPE, TZ and TMPDIR (those
// that are set), then extra, "NAME=value" entries that replace a variable
// of the same name. os/exec otherwise passes the host's whole environment,
// secrets included:
//
//	cmd := exec.Command("my-server")
//	cmd.Env = mcpstdio.DefaultEnv("API_KEY=" + key)
func DefaultEnv(extra ...string) []string {
	env := make([]string, 0, len(defaultEnvNames)+len(extra))
	replaced := func(name string) bool {
		for _, kv := range extra {
			if strings.HasPrefix(kv, name+"=") {
				return true
			}
		}
		return false
	}
	for _, name := range defaultEnvNames {
		if value, ok := os.LookupEnv(name); ok && !replaced(name) {
			env = append(env, name+"="+value)
		}
	}
	return append(env, extra...)
}
