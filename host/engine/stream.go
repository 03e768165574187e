package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/sdk"
)

// Event streams. When several gateways share one store (etcd), each
// managed flow's event outbox is delivered by one gateway at a time: the
// one whose member id the flow's stream claim, "stream/<flow>", names.
// A gateway claims a stream (ClaimStreams) when the claim is absent or
// names a member that is no longer live, in a guarded write, so of
// several gateways claiming at once one wins. The claim stays between
// events while the flow goes on; it goes with the last event of an ended
// flow (AckEvent), with the flow (PruneFlow), and with its gateway when
// that gateway stops (ReleaseStreams). A gateway
// that dies leaves its claims behind; they are taken over once its
// member is gone. On a store served by one gateway (bbolt) no claims are
// written: the member id is empty and every stream is the gateway's.
const streamPrefix = "stream/"

// streamClaim is the record of one flow's stream claim.
type streamClaim struct {
	Member string    `json:"member"`
	At     time.Time `json:"at"`
}

func streamKey(flowID string) string { return streamPrefix + flowID }

// streamHolder is the member whose claim flowID's stream is under, or ""
// for a stream no one claims.
func streamHolder(tx store.ReadTx, flowID string) (string, error) {
	it, err := tx.Get(streamKey(flowID))
	if errors.Is(err, store.ErrKeyNotFound) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	var c streamClaim
	if err := json.Unmarshal(it.Value, &c); err != nil {
		return "", fmt.Errorf("stream claim of flow %s is damaged (%v); delete key %s and the next delivery pass claims it again", flowID, err, it.Key)
	}
	return c.Member, nil
}

// ClaimStreams claims for member the event streams of flows that are
// free: claimed by no one, or by a member live does not know as live. It
// leaves alone the streams other live members hold, and returns, in the
// order given, the flows whose stream member holds after the write (those
// it held already and those it just claimed). Each claim is a guarded
// write (streamBatch of them a transaction), so of several gateways
// claiming the same streams at once each stream goes to one. A flow whose outbox is empty is not claimed:
// its claim would outlive its events.
func (e *Engine) ClaimStreams(member string, flows []string, live func(member string) bool) ([]string, error) {
	if member == "" {
		return nil, errors.New("claim event streams: a member id is required; a store served by one gateway needs no claims")
	}
	var held []string
	for len(flows) > 0 {
		batch := flows[:min(len(flows), streamBatch)]
		flows = flows[len(batch):]
		got, err := e.claimStreams(member, batch, live)
		held = append(held, got...)
		if err != nil {
			return held, err
		}
	}
	return held, nil
}

// claimStreams is ClaimStreams of at most streamBatch flows, in one
// transaction.
func (e *Engine) claimStreams(member string, flows []string, live func(member string) bool) ([]string, error) {
	var held []string
	err := e.write(func(t *txn) error {
		held = held[:0]
		for _, id := range flows {
			holder, err := streamHolder(t.tx, id)
			if err != nil {
				return err
			}
			if holder == member {
				held = append(held, id)
				continue
			}
			if holder != "" && live(holder) {
				continue
			}
			head, err := headEvent(t.tx, id)
			if err != nil {
				return err
			}
			if head == nil {
				continue
			}
			if err := t.put(streamKey(id), streamClaim{Member: member, At: t.now}); err != nil {
				return err
			}
			held = append(held, id)
		}
		return nil
	})
	return held, err
}

// streamBatch bounds the claims one transaction writes or deletes,
// within etcd's 128 operations (each claim reads two keys and writes one).
const streamBatch = 32

// ReleaseStreams deletes every stream claim member holds, so that the
// other gateways take its flows at once; a gateway calls it when it
// stops, after its last delivery. It deletes streamBatch claims a
// transaction, and returns how many it released.
func (e *Engine) ReleaseStreams(member string) (int, error) {
	released := 0
	for {
		var mine []string
		err := e.view(func(tx store.ReadTx) error {
			mine = mine[:0]
			return scanClaims(tx, func(key string, c streamClaim) bool {
				if c.Member == member {
					mine = append(mine, key)
				}
				return len(mine) < streamBatch
			})
		})
		if err != nil || len(mine) == 0 {
			return released, err
		}
		n := 0
		err = e.write(func(t *txn) error {
			n = 0
			for _, k := range mine {
				holder, err := streamHolder(t.tx, strings.TrimPrefix(k, streamPrefix))
				if err != nil {
					return err
				}
				if holder != member {
					continue // claimed by another since the read
				}
				if err := t.del(k); err != nil {
					return err
				}
				n++
			}
			return nil
		})
		if err != nil {
			return released, err
		}
		released += n
	}
}

// scanClaims calls fn with every stream claim, by key, until fn returns
// false.
func scanClaims(tx store.ReadTx, fn func(key string, c streamClaim) bool) error {
	var bad error
	err := tx.Scan(streamPrefix, store.ScanOptions{}, func(it store.Item) bool {
		var c streamClaim
		if err := json.Unmarshal(it.Value, &c); err != nil {
			bad = fmt.Errorf("stream claim %s is damaged (%v); delete it", it.Key, err)
			return false
		}
		return fn(it.Key, c)
	})
	return errors.Join(err, bad)
}

// StreamHolders returns the member holding each claimed stream, by flow.
func (e *Engine) StreamHolders() (map[string]string, error) {
	out := map[string]string{}
	err := e.view(func(tx store.ReadTx) error {
		clear(out)
		return scanClaims(tx, func(key string, c streamClaim) bool {
			out[strings.TrimPrefix(key, streamPrefix)] = c.Member
			return true
		})
	})
	return out, err
}

// dropStreamIfDone deletes flowID's stream claim once its outbox is empty
// and the flow has ended (or is gone). A flow that goes on keeps its
// gateway between events, so that its controller there finds what it
// kept on that machine (the pipeline controller's large values, in the
// home's data directory); its stream moves only when that gateway goes.
func (t *txn) dropStreamIfDone(flowID string) error {
	if _, err := t.tx.Get(streamKey(flowID)); errors.Is(err, store.ErrKeyNotFound) {
		return nil
	} else if err != nil {
		return err
	}
	head, err := headEvent(t.tx, flowID)
	if err != nil || head != nil {
		return err
	}
	f, err := loadFlow(t.tx, flowID)
	if err == nil && !f.Status.Terminal() {
		return nil
	}
	if err != nil && !errors.Is(err, sdk.ErrNotFound) && damaged(err) == nil {
		return err
	}
	return t.del(streamKey(flowID))
}
