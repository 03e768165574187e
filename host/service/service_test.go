package service_test

import (
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/service"
)

func config(goos string, user bool) service.Config {
	return service.Config{
		OS: goos, Exe: "/opt/flowgate/bin/flowgate", Home: "/srv/flow gate/100%", Config: "/etc/flowgate/gateway.yaml",
		User: user, UserHome: "/home/ann", UserName: "ann", UID: 501,
	}
}

// The systemd unit restarts the gateway on failure, stops only the
// gateway (KillMode=process) so the tasks' shims survive, and runs it on
// the configured home and config file.
func TestUnit(t *testing.T) {
	t.Parallel()
	u := service.Unit(config("linux", true))
	for _, line := range []string{
		"KillMode=process",
		"Restart=on-failure",
		`ExecStart="/opt/flowgate/bin/flowgate" "gateway" "--home" "/srv/flow gate/100%%" "--config" "/etc/flowgate/gateway.yaml"`,
		`Environment="FLOWGATE_HOME=/srv/flow gate/100%%"`,
		"WantedBy=default.target",
	} {
		require.Contains(t, strings.Split(u, "\n"), line, "unit:\n%s", u)
	}
	require.NotContains(t, u, "User=", "a user unit runs as its user already")

	sys := service.Unit(config("linux", false))
	require.Contains(t, sys, "\nUser=ann\n")
	require.Contains(t, sys, "\nWantedBy=multi-user.target\n")
}

// plist is the part of a launchd property list the test reads.
type plist struct {
	Dict struct {
		Items []struct {
			XMLName xml.Name
			Text    string    `xml:",chardata"`
			Strings []string  `xml:"string"`
			Keys    []string  `xml:"key"`
			False   *struct{} `xml:"false"`
		} `xml:",any"`
	} `xml:"dict"`
}

// The launchd plist restarts the gateway when it fails (KeepAlive, not on
// a successful exit), abandons the process group so the tasks' shims
// survive a stop, runs on the configured home and config, and is
// well-formed XML even with characters XML escapes.
func TestPlist(t *testing.T) {
	t.Parallel()
	c := config("darwin", true)
	c.Home = "/Users/ann/a&b <flowgate>"
	p := service.Plist(c)
	var doc plist
	require.NoError(t, xml.Unmarshal([]byte(p), &doc), "plist:\n%s", p)
	values := map[string]any{}
	items := doc.Dict.Items
	for i := 0; i+1 < len(items); i += 2 {
		require.Equal(t, "key", items[i].XMLName.Local)
		v := items[i+1]
		switch v.XMLName.Local {
		case "array":
			values[items[i].Text] = v.Strings
		case "dict":
			values[items[i].Text] = v.Keys
		default:
			values[items[i].Text] = v.XMLName.Local + ":" + v.Text
		}
	}
	require.Equal(t, "string:"+service.Label, values["Label"])
	require.Equal(t, []string{c.Exe, "gateway", "--home", c.Home, "--config", c.Config}, values["ProgramArguments"])
	require.Equal(t, "true:", values["AbandonProcessGroup"])
	require.Equal(t, []string{"SuccessfulExit"}, values["KeepAlive"])
	require.Contains(t, p, "<key>SuccessfulExit</key>\n\t\t<false/>")
	require.Equal(t, "true:", values["RunAtLoad"])
	require.Equal(t, "string:"+filepath.Join(c.Home, "gateway.log"), values["StandardErrorPath"])
	require.Contains(t, p, "<string>/Users/ann/a&amp;b &lt;flowgate&gt;</string>")
}

func TestPlans(t *testing.T) {
	t.Parallel()
	in, err := service.Install(config("linux", true))
	require.NoError(t, err)
	require.Equal(t, "/home/ann/.config/systemd/user/flowgate.service", in.Path)
	require.Equal(t, [][]string{{"systemctl", "--user", "daemon-reload"}, {"systemctl", "--user", "enable", "--now", "flowgate.service"}}, in.After)
	out, err := service.Uninstall(config("linux", false))
	require.NoError(t, err)
	require.Equal(t, "/etc/systemd/system/flowgate.service", out.Path)
	require.Equal(t, [][]string{{"systemctl", "disable", "--now", "flowgate.service"}}, out.Before)
	require.Contains(t, out.String(), "remove /etc/systemd/system/flowgate.service\n")

	in, err = service.Install(config("darwin", true))
	require.NoError(t, err)
	require.Equal(t, "/home/ann/Library/LaunchAgents/io.flowgate.gateway.plist", in.Path)
	require.Equal(t, [][]string{{"launchctl", "bootstrap", "gui/501", in.Path}}, in.After)
	out, err = service.Uninstall(config("darwin", false))
	require.NoError(t, err)
	require.Equal(t, [][]string{{"launchctl", "bootout", "system", "/Library/LaunchDaemons/io.flowgate.gateway.plist"}}, out.Before)

	for _, bad := range []func(*service.Config){
		func(c *service.Config) { c.OS = "windows" },
		func(c *service.Config) { c.Exe = "flowgate" },
		func(c *service.Config) { c.Home = "rel" },
		func(c *service.Config) { c.Config = "rel.yaml" },
		func(c *service.Config) { c.UserHome = "" },
	} {
		c := config("linux", true)
		bad(&c)
		_, err := service.Install(c)
		require.Error(t, err)
	}
}

// Apply writes the file and runs the commands in order, and removing a
// file that is already gone is not a failure.
func TestApply(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "units", "flowgate.service")
	var ran []string
	run := func(argv []string) error { ran = append(ran, strings.Join(argv, " ")); return nil }
	require.NoError(t, service.Plan{Path: path, Content: "x\n", After: [][]string{{"a"}, {"b"}}}.Apply(run))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, "x\n", string(b))
	require.NoError(t, service.Plan{Before: [][]string{{"c"}}, Path: path}.Apply(run))
	require.NoFileExists(t, path)
	require.NoError(t, service.Plan{Path: path}.Apply(run))
	require.Equal(t, []string{"a", "b", "c"}, ran)
}
