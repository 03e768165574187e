package etcd

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
)

// Defaults applied by Options.WithDefaults to zero fields. The two limits
// are etcd's own defaults (--max-txn-ops, --max-request-bytes): set them
// to the cluster's values when it was started with others.
const (
	DefaultMaxTxnOps       = 128
	DefaultMaxRequestBytes = 3 << 19 // 1.5 MiB
	DefaultRequestTimeout  = 10 * time.Second
	DefaultPageSize        = 256
	DefaultMaxAttempts     = 1000
	DefaultCacheSize       = 4096
)

// Options configures a Store. Prefix is required; every other zero field
// takes its default (see WithDefaults).
type Options struct {
	// Prefix is the installation's key prefix: every key the store reads or
	// writes starts with it, so several installations share one etcd
	// without seeing each other. It must start with "/"; a missing
	// trailing "/" is added.
	Prefix string
	// MaxTxnOps is the most operations etcd takes in one transaction (its
	// --max-txn-ops). A change that writes more keys is refused with an
	// error wrapping store.ErrTxnTooLarge. Zero means DefaultMaxTxnOps.
	MaxTxnOps int
	// MaxRequestBytes is the largest request etcd takes (its
	// --max-request-bytes). A change whose request would be larger is
	// refused with an error wrapping store.ErrTxnTooLarge. Zero means
	// DefaultMaxRequestBytes.
	MaxRequestBytes int
	// RequestTimeout bounds each request to etcd. Zero means
	// DefaultRequestTimeout.
	RequestTimeout time.Duration
	// PageSize is how many keys one range read fetches. Zero means
	// DefaultPageSize.
	PageSize int
	// MaxAttempts bounds how many times Update runs its function when
	// other writers keep changing what it read. Zero means
	// DefaultMaxAttempts.
	MaxAttempts int
	// CacheSize is how many keys the Store's cache of point reads holds
	// (see Store.Update). Zero means DefaultCacheSize.
	CacheSize int
	// OnCommit, if set, is called after every Update with how long the
	// call took, retries included (a failed Update too). It must not block.
	OnCommit func(took time.Duration)
	// Logger receives conflicts and failures at debug level. Nil discards
	// them.
	Logger hclog.Logger
}

// WithDefaults returns a copy of o with every zero field set to its
// default and Prefix ending in "/".
func (o Options) WithDefaults() Options {
	if o.Prefix != "" && !strings.HasSuffix(o.Prefix, "/") {
		o.Prefix += "/"
	}
	if o.MaxTxnOps == 0 {
		o.MaxTxnOps = DefaultMaxTxnOps
	}
	if o.MaxRequestBytes == 0 {
		o.MaxRequestBytes = DefaultMaxRequestBytes
	}
	if o.RequestTimeout == 0 {
		o.RequestTimeout = DefaultRequestTimeout
	}
	if o.PageSize == 0 {
		o.PageSize = DefaultPageSize
	}
	if o.MaxAttempts == 0 {
		o.MaxAttempts = DefaultMaxAttempts
	}
	if o.CacheSize == 0 {
		o.CacheSize = DefaultCacheSize
	}
	if o.Logger == nil {
		o.Logger = hclog.NewNullLogger()
	}
	return o
}

// Validate reports the first field of o that is missing or out of range,
// by name.
func (o Options) Validate() error {
	switch {
	case o.Prefix == "":
		return errors.New("etcd store: Options.Prefix is required: give each installation its own key prefix, such as /flowgate/prod")
	case !strings.HasPrefix(o.Prefix, "/"):
		return fmt.Errorf("etcd store: Options.Prefix %q must start with /", o.Prefix)
	case o.MaxTxnOps < 0:
		return errors.New("etcd store: Options.MaxTxnOps must not be negative")
	case o.MaxRequestBytes < 0:
		return errors.New("etcd store: Options.MaxRequestBytes must not be negative")
	case o.RequestTimeout < 0:
		return errors.New("etcd store: Options.RequestTimeout must not be negative")
	case o.PageSize < 0:
		return errors.New("etcd store: Options.PageSize must not be negative")
	case o.MaxAttempts < 0:
		return errors.New("etcd store: Options.MaxAttempts must not be negative")
	case o.CacheSize < 0:
		return errors.New("etcd store: Options.CacheSize must not be negative")
	}
	return nil
}
