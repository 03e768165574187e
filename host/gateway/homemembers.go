package gateway

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/flowgate/flowgate/host/home"
)

// homeMembers adds id to the home's list of the member ids its gateways
// have joined an etcd installation as (home.MembersFile), and returns the
// whole list. A task whose gateway is listed has its files in this home:
// this gateway reattaches to it or settles it as its own. Any other
// gateway's task, even one of another home on this machine, is not this
// home's to follow.
//
// One gateway serves a home at a time (its socket), so nothing else
// writes the file meanwhile. It is not synced: it must outlive a
// gateway's crash, not the machine's, which ends its tasks too.
func homeMembers(dir, id string) (map[string]bool, error) {
	path := filepath.Join(dir, home.MembersFile)
	ids := map[string]bool{}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("record this gateway's member id in %s: %w; check the home's permissions and free space", path, err)
	}
	defer f.Close()
	lines := bufio.NewScanner(f)
	for lines.Scan() {
		if line := strings.TrimSpace(lines.Text()); line != "" {
			ids[line] = true
		}
	}
	if err := lines.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w; remove it if it is damaged (the tasks of earlier gateways of this home are then marked lost)", path, err)
	}
	if !ids[id] {
		if _, err := f.WriteString(id + "\n"); err != nil {
			return nil, fmt.Errorf("record this gateway's member id in %s: %w; check the free space", path, err)
		}
	}
	ids[id] = true
	return ids, nil
}
