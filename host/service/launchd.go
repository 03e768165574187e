package service

import (
	"encoding/xml"
	"path/filepath"
	"strconv"
	"strings"
)

// plistPath is where the launchd property list goes.
func plistPath(c Config) string {
	if c.User {
		return filepath.Join(c.UserHome, "Library", "LaunchAgents", Label+".plist")
	}
	return filepath.Join("/Library/LaunchDaemons", Label+".plist")
}

// launchDomain is the launchctl domain the job is loaded into.
func launchDomain(c Config) string {
	if c.User {
		return "gui/" + strconv.Itoa(c.UID)
	}
	return "system"
}

// Plist returns the launchd property list that runs the gateway of c. It
// restarts the gateway when it exits unsuccessfully (KeepAlive with
// SuccessfulExit false) and, with AbandonProcessGroup, stops only the
// gateway when the job stops: tasks keep running under their shims. The
// gateway's output goes to gateway.log in its home.
func Plist(c Config) string {
	var b strings.Builder
	b.WriteString(xml.Header)
	b.WriteString(`<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">` + "\n")
	b.WriteString("<plist version=\"1.0\">\n<dict>\n")
	key := func(k string) { b.WriteString("\t<key>" + k + "</key>\n") }
	str := func(indent, s string) { b.WriteString(indent + "<string>" + xmlEscape(s) + "</string>\n") }
	key("Label")
	str("\t", Label)
	key("ProgramArguments")
	b.WriteString("\t<array>\n")
	for _, a := range c.argv() {
		str("\t\t", a)
	}
	b.WriteString("\t</array>\n")
	key("EnvironmentVariables")
	b.WriteString("\t<dict>\n\t\t<key>FLOWGATE_HOME</key>\n")
	str("\t\t", c.Home)
	b.WriteString("\t</dict>\n")
	if !c.User && c.UserName != "" {
		key("UserName")
		str("\t", c.UserName)
	}
	key("RunAtLoad")
	b.WriteString("\t<true/>\n")
	key("KeepAlive")
	b.WriteString("\t<dict>\n\t\t<key>SuccessfulExit</key>\n\t\t<false/>\n\t</dict>\n")
	key("AbandonProcessGroup")
	b.WriteString("\t<true/>\n")
	key("StandardOutPath")
	str("\t", filepath.Join(c.Home, "gateway.log"))
	key("StandardErrorPath")
	str("\t", filepath.Join(c.Home, "gateway.log"))
	b.WriteString("</dict>\n</plist>\n")
	return b.String()
}

func xmlEscape(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}
