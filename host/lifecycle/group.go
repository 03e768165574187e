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
type Group struct {
	parts []Named
}

// StartAll starts parts in order. If one fails, those already started are
// stopped in reverse order and the error, an *Error, says which part could
// not start ("scheduler: start: …"); nothing is left running.
func StartAll(ctx context.Context, parts ...Named) (*Group, error) {
	g := &Group{}
	for _, p := range parts {
		if err := p.Part.Start(ctx); err != nil {
			serr := g.Stop(ctx)
			err = named(p.Name, "start", err)
			if serr != nil {
				return nil, errors.Join(err, serr)
			}
			return nil, err
		}
		g.parts = append(g.parts, p)
	}
	return g, nil
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
