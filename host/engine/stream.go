package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/flowgate/flowgate/host/store"
)

// Event streams. When several gateways share one store (etcd), each
// managed flow's event outbox is delivered by one gateway at a time: the
// one whose member id the flow's stream claim, "stream/<flow>", names.
// A gateway claims a stream (ClaimStreams) when the claim is absent or
// names a member that is no longer live, in a guarded write, so of
// several gateways claiming at once one wins. The claim goes with the
// last event of the outbox (AckEvent), with the flow (PruneFlow), and
// with its gateway when that gateway stops (ReleaseStreams). A gateway
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
// it held already and those it just claimed). All claims are one
// transaction, so of several gateways claiming the same streams at once
// each stream goes to one. A flow whose outbox is empty is not claimed:
// its claim would outlive its events.
func (e *Engine) ClaimStreams(member string, flows []string, live func(member string) bool) ([]string, error) {
	if member == "" {
		return nil, errors.New("claim event streams: a member id is required; a store served by one gateway needs no claims")
	}
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

// ReleaseStreams deletes every stream claim member holds, so that the
// other gateways take its flows at once; a gateway calls it when it
// stops, after its last delivery. It returns how many it released.
func (e *Engine) ReleaseStreams(member string) (int, error) {
	n := 0
	err := e.write(func(t *txn) error {
		n = 0
		var mine []string
		var bad error
		err := t.tx.Scan(streamPrefix, store.ScanOptions{}, func(it store.Item) bool {
			var c streamClaim
			if bad = json.Unmarshal(it.Value, &c); bad != nil {
				bad = fmt.Errorf("stream claim %s is damaged (%v); delete it", it.Key, bad)
				return false
			}
			if c.Member == member {
				mine = append(mine, it.Key)
			}
			return true
		})
		if err := errors.Join(err, bad); err != nil {
			return err
		}
		for _, k := range mine {
			if err := t.del(k); err != nil {
				return err
			}
		}
		n = len(mine)
		return nil
	})
	return n, err
}

// StreamHolders returns the member holding each claimed stream, by flow.
func (e *Engine) StreamHolders() (map[string]string, error) {
	out := map[string]string{}
	err := e.view(func(tx store.ReadTx) error {
		clear(out)
		var bad error
		err := tx.Scan(streamPrefix, store.ScanOptions{}, func(it store.Item) bool {
			var c streamClaim
			if bad = json.Unmarshal(it.Value, &c); bad != nil {
				return false
			}
			out[it.Key[len(streamPrefix):]] = c.Member
			return true
		})
		return errors.Join(err, bad)
	})
	return out, err
}

// dropStreamIfDone deletes flowID's stream claim when its outbox is
// empty: the next event, whenever it comes, is anyone's to claim.
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
	return t.del(streamKey(flowID))
}
