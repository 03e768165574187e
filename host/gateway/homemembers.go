package gateway

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/flowgate/flowgate/host/home"
)

// keptMemberIDs bounds the member ids a home remembers: far more
// restarts than a task outlives.
const keptMemberIDs = 200

// rememberMember adds id to the member ids of home (home.MembersFile),
// so that the home's next gateway knows the tasks id started for its own.
func rememberMember(dir, id string) error {
	ids := homeMembers(dir)
	ids = append(ids, id)
	ids = ids[max(0, len(ids)-keptMemberIDs):]
	path := filepath.Join(dir, home.MembersFile)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(strings.Join(ids, "\n")+"\n"), 0o600); err != nil {
		return fmt.Errorf("record member id %s in the home: %w; check that %s is writable", id, err, dir)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("record member id %s in the home: %w; check that %s is writable", id, err, dir)
	}
	return nil
}

// homeMembers lists the member ids home's gateways took; none when the
// file is missing or unreadable.
func homeMembers(dir string) []string {
	b, err := os.ReadFile(filepath.Join(dir, home.MembersFile))
	if err != nil {
		return nil
	}
	var ids []string
	for _, l := range bytes.Split(b, []byte("\n")) {
		if id := strings.TrimSpace(string(l)); id != "" {
			ids = append(ids, id)
		}
	}
	return ids
}

// RanFromHome says whether the gateway with member id ran from the home
// dir (one of its gateways took that id), so that the log files of the
// tasks it ran are there. A task that names no gateway (one gateway, on
// bbolt) ran from any home. It reads the home's file at each call.
func RanFromHome(dir, id string) bool {
	return id == "" || slices.Contains(homeMembers(dir), id)
}
