package lifecycle

import (
	"context"
	"errors"
)

// Part is anything with the gateway's lifecycle.
type Part interface {
	Start(ctx context.Context) error
	Stop(ctx context.Context) error
}

// Named is a part with the name its errors carry.
type Named struct {
	Name string
	Part Part
}

// Group is a set of started parts, stopped together in reverse order.
// The zero value is an empty group, ready to Start parts.
type Group struct {
	parts []Named
}

// StartAll starts parts in order. If one fails, those already started are
// stopped in reverse order and the error, an *Error, says which part could
// not start ("scheduler: start: …"); nothing is left running.
func StartAll(ctx context.Context, parts ...Named) (*Group, error) {
	g := &Group{}
	if err := g.Start(ctx, parts...); err != nil {
		return nil, err
	}
	return g, nil
}

// Start starts parts in order, after those the group holds, and adds
// each to the group once it runs; so a caller that must build a part
// from what an earlier one opened starts the group in steps. If one
// fails, every part of the group, of earlier steps too, is stopped in
// reverse order, and the error, an *Error, says which part could not
// start, joined with any failure to stop the others; the group is then
// empty.
func (g *Group) Start(ctx context.Context, parts ...Named) error {
	for _, p := range parts {
		if err := p.Part.Start(ctx); err != nil {
			err = named(p.Name, "start", err)
			if serr := g.Stop(ctx); serr != nil {
				return errors.Join(err, serr)
			}
			return err
		}
		g.parts = append(g.parts, p)
	}
	return nil
}

// Stop stops every part of the group in reverse start order, even when
// one fails, and returns every failure, each an *Error naming its part. Stopping a
// stopped group does nothing.
func (g *Group) Stop(ctx context.Context) error {
	var errs []error
	for i := len(g.parts) - 1; i >= 0; i-- {
		if err := g.parts[i].Part.Stop(ctx); err != nil {
			errs = append(errs, named(g.parts[i].Name, "stop", err))
		}
	}
	g.parts = nil
	return errors.Join(errs...)
}
