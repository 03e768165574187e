package plugintest

import (
	"context"
	"fmt"
	"os"
	"os/exec"

	"github.com/flowgate/flowgate/host/pluginhost"
	"github.com/flowgate/flowgate/sdk"
	"github.com/flowgate/flowgate/sdk/pluginclient"
)

// started is the start case's result and the Info the plugin gave.
type started struct {
	Result
	info sdk.Info
}

// start launches the plugin once on its own, as the gateway does, and
// checks the handshake, Setup and GetInfo; then stops it.
func (h *harness) start(ctx context.Context) started {
	res := started{Result: Result{Case: "start"}}
	cmd := exec.Command(h.cfg.Path, h.cfg.Args...)
	cmd.Env = append(os.Environ(), sdk.LogLevelEnv+"=info")
	for k, v := range h.cfg.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	client := pluginhost.NewLaunch(pluginhost.ClientConfig(cmd, h.cfg.Logger, h.cfg.Timeout))
	defer client.Kill()
	rpc, failed := client.Start()
	if failed != nil {
		res.Detail = fmt.Sprintf("no go-plugin handshake from %s: %s (docs/protocol.md, section 1)", h.cfg.Path, failed.Summary())
		res.Did = append(res.Did, stderrLines(failed.Stderr)...)
		return res
	}
	if rc := client.ReattachConfig(); rc != nil {
		res.Did = append(res.Did, fmt.Sprintf("handshake: protocol %d, gRPC on %s %s", client.NegotiatedVersion(), rc.Addr.Network(), rc.Addr))
	}
	if err := rpc.Ping(); err != nil {
		res.Did = append(res.Did, "health service: not served (optional)")
	} else {
		res.Did = append(res.Did, "health service: serving")
	}
	p, err := pluginclient.Connect(ctx, rpc, pluginhost.NewHost(h.eng, "", nil))
	if err != nil {
		res.Detail = fmt.Sprintf("Setup failed: %v (docs/protocol.md, section 2)", err)
		return res
	}
	res.Did = append(res.Did, "Setup: ok")
	info, err := p.Info(ctx)
	if err != nil {
		res.Detail = fmt.Sprintf("GetInfo failed: %v", err)
		return res
	}
	res.info = info
	res.Did = append(res.Did, fmt.Sprintf("GetInfo: name %q, version %q, api_version %d", info.Name, info.Version, info.APIVersion))
	switch {
	case info.Name == "":
		res.Detail = "GetInfo gave no name: answer the name flows use as their controller id"
		return res
	case info.APIVersion != sdk.APIVersion:
		res.Detail = fmt.Sprintf("GetInfo gave api_version %d; this flowgate speaks %d", info.APIVersion, sdk.APIVersion)
		return res
	}
	sctx, cancel := context.WithTimeout(ctx, h.cfg.Timeout)
	defer cancel()
	if err := p.Shutdown(sctx); err != nil {
		res.Detail = fmt.Sprintf("Shutdown failed: %v (docs/protocol.md, section 6)", err)
		return res
	}
	res.Did = append(res.Did, "Shutdown: ok")
	res.Pass, res.Detail = true, "handshake, Setup, GetInfo and Shutdown answered"
	return res
}

// stderrLines is what a failed start shows of the plugin's stderr.
func stderrLines(lines []string) []string {
	if len(lines) == 0 {
		return []string{"stderr: (nothing)"}
	}
	out := []string{fmt.Sprintf("stderr, the last %d line(s):", len(lines))}
	for _, l := range lines {
		out = append(out, "  "+l)
	}
	return out
}
