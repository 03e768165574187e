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

// Package sdk is what plugin authors read: its documentation names no
// go-plugin type; the gateway's end lives in sdk/pluginclient.
func TestDocNamesNoGoPluginType(t *testing.T) {
	t.Parallel()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go tool is not on PATH")
	}
	out, err := exec.Command(goTool, "doc", "-all", ".").CombinedOutput()
	require.NoError(t, err, "go doc -all: %s", out)
	require.Contains(t, string(out), "func Serve(c Controller)", "go doc printed package sdk")
	require.Empty(t, goPluginType.FindAllString(string(out), -1), "go doc -all ./sdk names go-plugin types")
}
