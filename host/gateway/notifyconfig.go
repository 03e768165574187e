package gateway

import (
	"time"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/notify"
	"github.com/flowgate/flowgate/host/notify/dest"
	"github.com/flowgate/flowgate/host/scheduler"
)

// NotifyRetry is the config's notify_retry section: how long a message
// to a destination is tried before it is given up (see notify.Config).
//
//	notify_retry:
//	  attempts: 12      # tries of one message; then notify.failed and an audit finding
//	  max_backoff: 1h   # the longest wait between two tries (they double from 5s)
type NotifyRetry struct {
	Attempts   int      `yaml:"attempts"`
	MaxBackoff Duration `yaml:"max_backoff"`
}

// NotifyConfig is the part of the notifier's config the file gives:
// the retry bound and the run center's public address for links.
func (c FileConfig) NotifyConfig() notify.Config {
	return notify.Config{Attempts: c.NotifyRetry.Attempts, MaxBackoff: time.Duration(c.NotifyRetry.MaxBackoff), PublicURL: c.HTTP.PublicURL}
}

// Book is the destination book of the config's notify: map, its ${VAR}
// refs read with lookup (the gateway's environment). A ref to a variable
// that is not set, or a URL its service refuses, is an error naming the
// key (notify.NAME), never a secret.
func (c FileConfig) Book(lookup func(string) (string, bool)) (*dest.Book, error) {
	return dest.NewBook(dest.Config{Named: c.Notify, Lookup: lookup})
}

// Book is the gateway's destination book: the config's named
// destinations, their ${VAR} refs read from the gateway's environment.
func (g *Gateway) Book() *dest.Book { return g.book }

// notifier is the gateway's deliverer of notices over eng, sending
// under leader with the gateway's book, home and the config's bound.
func (g *Gateway) notifier(eng *engine.Engine, leader scheduler.Leader) *notify.Notifier {
	nc := g.cfg.File.NotifyConfig()
	nc.Logger, nc.Tick, nc.Leader, nc.Book, nc.Home = g.cfg.Logger.Named("notify"), g.cfg.Poll*10, leader, g.book, g.cfg.Home
	return notify.New(eng, nc)
}
