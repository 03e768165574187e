package gateway

import (
	"context"

	"github.com/hashicorp/go-hclog"

	"github.com/flowgate/flowgate/host/pluginhost"
	"github.com/flowgate/flowgate/host/plugintest"
)

// PluginCheck is what checking one plugin entry of a config found
// (pluginhost.CheckResult); its Outcome is CheckOK, CheckError or
// CheckSkipped.
type PluginCheck = pluginhost.CheckResult

// The outcomes of a PluginCheck.
const (
	CheckOK      = pluginhost.CheckOK
	CheckError   = pluginhost.CheckError
	CheckSkipped = pluginhost.CheckSkipped
)

// CheckPlugins starts each plugin entry of config c, and each file of its
// plugins_dir, as a gateway's start would, asks it for its handshake and
// name, and stops it at once (pluginhost.Check). logger gets the
// plugins' own logs. It needs no gateway and changes nothing.
func CheckPlugins(ctx context.Context, c FileConfig, logger hclog.Logger) []PluginCheck {
	sc := pluginhost.SupervisorConfig{Plugins: c.PluginSpecs(), LogLevel: c.LogLevel, Logger: logger}
	return pluginhost.Check(ctx, sc, c.PluginsDir)
}

// PluginTestConfig says which plugin `flowgate plugins test` drives and
// how long to wait for it (plugintest.Config); PluginTestReport is the
// outcome.
type (
	PluginTestConfig = plugintest.Config
	PluginTestReport = plugintest.Report
)

// TestPlugin runs the conformance harness on one plugin under an
// embedded gateway (plugintest.Run).
func TestPlugin(ctx context.Context, c PluginTestConfig) (PluginTestReport, error) {
	return plugintest.Run(ctx, c)
}
