package sdk_test

import (
	"os/exec"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"
)

// goPluginType matches a hashicorp/go-plugin type as go doc prints it
// (plugin.PluginSet, plugin.ClientProtocol, …), not prose that ends a
// sentence with "plugin.".
var goPluginType = regexp.MustCompile(`\bplugin\.[A-Z]\w*`)

// Packages sdk and sdk/sdktest are what plugin authors read: their
// documentation names no go-plugin type; the gateway's end lives in
// sdk/pluginclient, and the in-process connection tests use in
// sdk/internal/grpctest.
func TestDocNamesNoGoPluginType(t *testing.T) {
	t.Parallel()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go tool is not on PATH")
	}
	for pkg, want := range map[string]string{".": "func Serve(c Controller)", "./sdktest": "func RunHostConformance("} {
		out, err := exec.Command(goTool, "doc", "-all", pkg).CombinedOutput()
		require.NoError(t, err, "go doc -all %s: %s", pkg, out)
		require.Contains(t, string(out), want, "go doc printed %s", pkg)
		require.Empty(t, goPluginType.FindAllString(string(out), -1), "go doc -all %s names go-plugin types", pkg)
	}
}
