package api_test

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/api"
)

// fakeGatewayEnv makes the test binary a fake gateway listening on the
// socket path it names: it answers every request like a healthy gateway.
const fakeGatewayEnv = "FLOWGATE_TEST_FAKE_GATEWAY"

// nobody is the uid the fake gateway runs as.
const nobody = 65534

func TestMain(m *testing.M) {
	if path := os.Getenv(fakeGatewayEnv); path != "" {
		os.Exit(fakeGateway(path))
	}
	code := m.Run()
	sharedEtcd.Close()
	os.Exit(code)
}

// fakeGateway listens on path, says "ready" on stdout, and answers every
// request with an empty gateway status until killed.
func fakeGateway(path string) int {
	l, err := net.Listen("unix", path)
	if err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		return 1
	}
	os.Stdout.WriteString("ready\n")
	srv := &http.Server{ReadHeaderTimeout: time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"running":true,"home":"/","tasks":{},"flows":{}}`)
	})}
	_ = srv.Serve(l)
	return 0
}

// hijackedSocket reproduces the red team's hijack: user nobody listens on
// a socket of its own, which then sits at the gateway socket's place in
// the current user's home. It returns that path. The listener runs until
// the test ends.
func hijackedSocket(t *testing.T) string {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("needs root to run a listener as another user; run the tests as root to cover the socket hijack")
	}
	// nobody needs a directory it can write and a copy of this binary it
	// can run.
	theirs, err := os.MkdirTemp("", "fgpeer")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(theirs) })
	require.NoError(t, os.Chmod(theirs, 0o755))
	require.NoError(t, os.Chown(theirs, nobody, nobody))
	bin := filepath.Join(theirs, "fake")
	self, err := os.ReadFile(os.Args[0])
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(bin, self, 0o755))

	cmd := exec.Command(bin)
	cmd.Env = []string{fakeGatewayEnv + "=" + filepath.Join(theirs, "s.sock")}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err, "the fake gateway starts")
	require.Equal(t, "ready\n", line)

	sock := socketPath(t)
	require.NoError(t, os.Rename(filepath.Join(theirs, "s.sock"), sock))
	return sock
}

func TestDialRemoteRefusesASocketOwnedByAnotherUser(t *testing.T) {
	t.Parallel()
	sock := hijackedSocket(t)
	_, err := api.DialRemote(sock)
	require.ErrorIs(t, err, api.ErrUntrustedGateway)
	require.NotErrorIs(t, err, api.ErrNoGateway, "a command must not fall back to the store")
	require.Contains(t, err.Error(), "owned by nobody (uid 65534)")
	require.Contains(t, err.Error(), "rm "+sock, "says how to fix it")
}

func TestDialRemoteRefusesAListenerRunAsAnotherUser(t *testing.T) {
	t.Parallel()
	sock := hijackedSocket(t)
	// The file now looks like ours; only the listener's credentials
	// tell.
	require.NoError(t, os.Chown(sock, os.Getuid(), os.Getgid()))
	_, err := api.DialRemote(sock)
	require.ErrorIs(t, err, api.ErrUntrustedGateway)
	require.Contains(t, err.Error(), "runs as nobody (uid 65534)")
}

func TestDialRemoteTrustsAGatewayUserNamedInTheEnvironment(t *testing.T) {
	sock := hijackedSocket(t)
	t.Setenv(api.GatewayUsersEnv, strconv.Itoa(nobody))
	c, err := api.DialRemote(sock)
	require.NoError(t, err, "a gateway user the caller names is trusted")
	c.Close()
}

func TestDialRemoteRefusesASocketOthersCanWrite(t *testing.T) {
	t.Parallel()
	sock, _ := serve(t, http.NotFoundHandler())
	require.NoError(t, os.Chmod(sock, 0o666))
	_, err := api.DialRemote(sock)
	require.ErrorIs(t, err, api.ErrUntrustedGateway)
	require.Contains(t, err.Error(), "writable by group or others")
}

func TestDialRemoteRefusesAHomeOthersCanWrite(t *testing.T) {
	t.Parallel()
	sock, _ := serve(t, http.NotFoundHandler())
	require.NoError(t, os.Chmod(filepath.Dir(sock), 0o777))
	_, err := api.DialRemote(sock)
	require.ErrorIs(t, err, api.ErrUntrustedGateway)
	require.Contains(t, err.Error(), filepath.Dir(sock)+" is writable by group or others (mode 0777)")
}
