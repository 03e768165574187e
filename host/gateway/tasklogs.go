package gateway

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/flowgate/flowgate/host/store/etcd"
)

// logLookupTimeout bounds the look-up of the gateway that ran a task,
// for a page that shows its log.
const logLookupTimeout = 3 * time.Second

// LogElsewhere is the error for a task's log that cannot be read from
// here: a task's log is files in the home of the gateway that ran it
// (gateway, a member id host.pid), and why says what keeps this one from
// them and where to read them instead.
func LogElsewhere(gateway, why string) error {
	return fmt.Errorf("the log of this task is on host %s (gateway %s), which is not reachable from here: %s", memberHost(gateway), gateway, why)
}

// logHome is the run center's Config.LogHome: nil on bbolt, where every
// log is in the home. A task's log is in dir when one of this home's
// gateways ran it (mine); in the home of the gateway that ran it when
// that gateway is a member on this machine; otherwise it cannot be read
// from here, and the error (LogElsewhere) says where it is.
func (r *records) logHome(dir string) func(ctx context.Context, gateway string) (string, error) {
	if r.member == nil {
		return nil
	}
	mine, es, host := r.mine(dir), r.Store.(*etcd.Store), r.member.Host()
	return func(ctx context.Context, gateway string) (string, error) {
		if mine(gateway) {
			return dir, nil
		}
		ctx, cancel := context.WithTimeout(ctx, logLookupTimeout)
		defer cancel()
		rec, err := es.Member(ctx, gateway)
		switch {
		case err != nil:
			return "", LogElsewhere(gateway, fmt.Sprintf("looking that gateway up failed (%v); reload the page once etcd answers", err))
		case rec == nil:
			return "", LogElsewhere(gateway, "that gateway left the installation; run flowgate logs on that host, with the home that gateway ran from")
		case rec.Host == host && rec.Home != "":
			return rec.Home, nil
		case strings.HasPrefix(rec.Address, "/"): // a socket: no run center
			return "", LogElsewhere(gateway, "a gateway reads only its own machine's logs; run flowgate logs on that host")
		default:
			return "", LogElsewhere(gateway, fmt.Sprintf("a gateway reads only its own machine's logs; open that gateway's run center (%s) or run flowgate logs on that host", rec.Address))
		}
	}
}
