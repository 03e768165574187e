package dest

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/nicholas-fedor/shoutrrr/pkg/router"
	"github.com/nicholas-fedor/shoutrrr/pkg/types"
)

// service is the shoutrrr service raw (a resolved URL) names, set up
// from it. Unlike shoutrrr's router, whose error drops the cause, its
// error says what the service refused in the URL (scrub it before
// showing it: it may quote the URL).
func service(raw string) (types.Service, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("not a valid URL: %s", scrubURLError(err))
	}
	base, _, custom := strings.Cut(u.Scheme, "+")
	svc, err := (&router.ServiceRouter{}).NewService(base)
	if err != nil {
		return nil, err
	}
	if custom {
		c, ok := svc.(types.CustomURLService)
		if !ok {
			return nil, fmt.Errorf("%s does not take a %s+ URL; write %s://…", base, base, base)
		}
		if u, err = c.GetConfigURLFromCustom(u); err != nil {
			return nil, fmt.Errorf("%s: %w", base, err)
		}
	}
	if err := svc.Initialize(u, nil); err != nil {
		return nil, fmt.Errorf("%s: %w", base, err)
	}
	return svc, nil
}

// titled are the shoutrrr services that take a title (a mail's
// subject); the others refuse one.
var titled = []string{"bark", "discord", "generic", "gotify", "ifttt", "join", "lark", "matrix", "mattermost", "ntfy",
	"opsgenie", "pushbullet", "pushover", "slack", "smtp", "teams", "telegram", "zulip"}

// sendService sends text through shoutrrr, its first line as the title
// where the service takes one, within timeout or ctx.
func (r resolved) sendService(ctx context.Context, text string, timeout time.Duration) error {
	svc, err := service(r.raw)
	if err != nil {
		return fmt.Errorf("%s: %s", r.shown, r.scrub(err.Error()))
	}
	params := types.Params{}
	if scheme, _, _ := strings.Cut(r.raw, ":"); slices.Contains(titled, strings.ToLower(strings.Split(scheme, "+")[0])) {
		params["title"], _, _ = strings.Cut(text, "\n")
	}
	actx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	// shoutrrr's Send takes no context: it runs on, bounded by its own
	// client's timeout, while the caller goes on at the deadline.
	done := make(chan error, 1)
	go func() { done <- svc.Send(text, &params) }()
	select {
	case err = <-done:
	case <-actx.Done():
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		err = fmt.Errorf("timed out after %s", timeout)
	}
	if err != nil {
		return fmt.Errorf("%s: %s", r.shown, r.scrub(err.Error()))
	}
	return nil
}
