package pluginhost

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	plugin "github.com/hashicorp/go-plugin"

	"github.com/flowgate/flowgate/sdk"
	"github.com/flowgate/flowgate/sdk/pluginclient"
)

// withSelf returns c with Self set to the running executable when empty.
func (c SupervisorConfig) withSelf() (SupervisorConfig, error) {
	if c.Self != "" {
		return c, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return c, fmt.Errorf("find the flowgate executable for first-party plugins: %w", err)
	}
	c.Self = exe
	return c, nil
}

// command builds the plugin's process: its own executable, or flowgate
// (c.Self) serving a first-party plugin. It runs in its own process group
// with the gateway's environment but for its FLOWGATE_* variables (the
// gateway's settings and credentials, FLOWGATE_ETCD_PASSWORD among them),
// then what flowgate tells a plugin and the entry's env.
func (c SupervisorConfig) command(spec Spec) *exec.Cmd {
	var cmd *exec.Cmd
	if spec.Path == "" {
		cmd = exec.Command(c.Self, "plugin", "serve", spec.Name)
	} else {
		cmd = exec.Command(spec.Path, spec.Args...)
	}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "FLOWGATE_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, sdk.LogLevelEnv+"="+c.LogLevel)
	if c.DataDir != "" {
		cmd.Env = append(cmd.Env, sdk.DataDirEnv+"="+c.DataDir)
	}
	for k, v := range spec.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd
}

// ClientConfig is how a gateway runs plugin process cmd with go-plugin:
// gRPC only, flowgate's handshake, the plugin's log and any stray stdout
// or stderr lines to log, and the handshake bounded by startTimeout.
// cmd.Env must hold the whole environment the plugin gets: go-plugin adds
// none of the gateway's.
//
// The plugin makes its socket, and the gateway the Host's socket for it,
// in SocketDir, which go-plugin's PLUGIN_UNIX_SOCKET_DIR names to the
// plugin; if that directory cannot be had, both go to TMPDIR and log
// says why.
func ClientConfig(cmd *exec.Cmd, log hclog.Logger, startTimeout time.Duration) *plugin.ClientConfig {
	dir, err := SocketDir()
	if err != nil {
		log.Warn("plugin sockets go to TMPDIR, where a killed gateway leaves them", "error", err)
	} else {
		cmd.Env = append(cmd.Env, plugin.EnvUnixSocketDir+"="+dir)
	}
	return &plugin.ClientConfig{
		HandshakeConfig:  pluginclient.Handshake(),
		Plugins:          pluginclient.PluginSetIn(dir),
		Cmd:              cmd,
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		Logger:           log,
		StartTimeout:     startTimeout,
		SyncStdout:       logWriter{log, "stdout"},
		SyncStderr:       logWriter{log, "stderr"},
		// cmd.Env already holds the environment; without this go-plugin
		// appends the gateway's again, after the plugin's own settings,
		// and it would win over them.
		SkipHostEnv: true,
	}
}

// dial starts spec's plugin process, connects to it with h serving its
// callbacks, and checks what it reports: its name must be spec.Name
// (unless that is empty, as for a file found in plugins_dir, which is
// named by what it reports) and its controller API this gateway's. The
// handshake, Setup and Info are each bounded by StartTimeout.
// On error the process and its group are killed and the
// error says which step failed (a failed handshake wraps a *StartError,
// with the plugin's exit status and last stderr lines); one a restart cannot fix is a
// *permanentError, and one that is a config mistake (a checksum or name
// mismatch, an executable someone else controls) wraps a *ConfigError.
func (c SupervisorConfig) dial(ctx context.Context, spec Spec, log hclog.Logger, h sdk.Host) (*plugin.Client, pluginclient.Plugin, sdk.Info, error) {
	cmd := c.command(spec)
	if spec.Path != "" {
		// Checked at every launch, as the checksum is: the file may have
		// changed hands since the gateway started. A file that is gone
		// fails to start below, as before, and is tried again.
		if err := spec.checkOwner(cmd.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, nil, sdk.Info{}, &permanentError{err: err}
		}
	}
	cfg := ClientConfig(cmd, log, c.StartTimeout)
	if spec.SHA256 != "" {
		sum, _ := hex.DecodeString(spec.SHA256)
		cfg.SecureConfig = &plugin.SecureConfig{Checksum: sum, Hash: sha256.New()}
	}
	client := NewLaunch(cfg)
	conn, info, err := c.connect(ctx, spec, client, cmd.Path, h)
	if err != nil {
		client.Kill()
		if cmd.Process != nil && cmd.Process.Pid > 1 {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // anything it left in its group
		}
		return nil, nil, sdk.Info{}, err
	}
	return client.Client, conn, info, nil
}

// connect is dial after the client is made: the handshake, Connect, Info
// and the checks of what Info says. path is the executable, for errors.
func (c SupervisorConfig) connect(ctx context.Context, spec Spec, client *Launch, path string, h sdk.Host) (pluginclient.Plugin, sdk.Info, error) {
	rpc, failed := client.Start()
	if failed != nil {
		if errors.Is(failed, plugin.ErrChecksumsDoNotMatch) {
			return nil, sdk.Info{}, &permanentError{err: spec.mistake("sha256", "the executable %s does not match it%s; reinstall the plugin the config pins, or fix the sha256", path, spec.which())}
		}
		return nil, sdk.Info{}, fmt.Errorf("plugin %s did not start: %w", spec.Name, failed)
	}
	sctx, cancel := context.WithTimeout(ctx, c.StartTimeout)
	deadline, _ := sctx.Deadline()
	conn, err := pluginclient.Connect(sctx, rpc, h)
	cancel()
	if err != nil {
		// At the deadline the call can end with the plugin's reset of the
		// stream (RST_STREAM CANCEL) before sctx says it expired, so the
		// clock decides, not sctx.Err alone.
		if ctx.Err() == nil && (errors.Is(sctx.Err(), context.DeadlineExceeded) || !time.Now().Before(deadline)) {
			return nil, sdk.Info{}, fmt.Errorf("plugin %s did not answer Setup within %s (the start timeout); it must answer Setup at once (docs/protocol.md, section 2): fix the plugin, or see its log",
				logName(spec), c.StartTimeout)
		}
		return nil, sdk.Info{}, fmt.Errorf("plugin %s: connect: %w", spec.Name, err)
	}
	ictx, cancel := context.WithTimeout(ctx, c.StartTimeout)
	info, err := conn.Info(ictx)
	cancel()
	if err != nil {
		return nil, sdk.Info{}, fmt.Errorf("plugin %s: info: %w", spec.Name, err)
	}
	if spec.Name != "" && info.Name != spec.Name {
		return nil, info, &permanentError{err: spec.mistake("name", "the config names the plugin %q, but the executable %s reports the name %q: set name: %s in the gateway config, or point path at the %s plugin",
			spec.Name, path, info.Name, info.Name, spec.Name)}
	}
	if info.APIVersion != sdk.APIVersion {
		return nil, info, &permanentError{err: fmt.Errorf("plugin %s speaks controller API %d; this gateway speaks %d: rebuild it with this flowgate's sdk", spec.Name, info.APIVersion, sdk.APIVersion)}
	}
	return conn, info, nil
}
