package engine_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/sdk"
)

// An append to a flow's history below its bound writes the entry and the
// history's meta (its last seq, so that the next append needs no scan),
// and nothing else: no drop mark. Each flow write used to put a drop mark
// as well.
func TestHistoryAppendWritesOnlyTheEntryAndMeta(t *testing.T) {
	t.Parallel()
	st := openStore(t)
	eng, err := engine.New(st, engine.Config{})
	require.NoError(t, err)
	f := createFlow(t, eng)
	for i := range 10 {
		f, err = eng.UpdateFlow(f.ID, f.Revision, engine.FlowPatch{State: []byte(fmt.Sprintf(`{"n":%d}`, i))})
		require.NoError(t, err)
	}
	var want []string
	for seq := 1; seq <= 11; seq++ {
		want = append(want, fmt.Sprintf("history/%s/e/%020d", f.ID, seq))
	}
	want = append(want, "history/"+f.ID+"/meta")
	require.Equal(t, want, keysUnder(t, st, "history/"+f.ID+"/"))
}

// A history written by the earlier layout (a drop mark per droppable
// entry, a meta written on every append) keeps its bound: the oldest
// droppable entries go, with their marks, and the seqs and the dropped
// count carry on from it.
func TestHistoryBoundOnTheEarlierLayout(t *testing.T) {
	t.Parallel()
	st := openStore(t)
	eng, err := engine.New(st, engine.Config{HistoryLimit: 4})
	require.NoError(t, err)
	f := createFlow(t, eng) // entry 1, flow.created: kept
	dir := "history/" + f.ID + "/"
	require.NoError(t, st.Update(t.Context(), func(tx store.Tx) error {
		for seq := 2; seq <= 5; seq++ {
			e := fmt.Sprintf(`{"seq":%d,"at":"2026-01-01T00:00:00Z","kind":"revision","summary":"old %d"}`, seq, seq)
			if _, err := tx.Put(fmt.Sprintf("%se/%020d", dir, seq), []byte(e)); err != nil {
				return err
			}
			if _, err := tx.Put(fmt.Sprintf("%so/%020d", dir, seq), nil); err != nil {
				return err
			}
		}
		_, err := tx.Put(dir+"meta", []byte(`{"last":5,"count":5}`))
		return err
	}))

	f, err = eng.UpdateFlow(f.ID, f.Revision, engine.FlowPatch{Status: sdk.FlowRunning})
	require.NoError(t, err)
	page, err := eng.History(f.ID, 0, 0)
	require.NoError(t, err)
	var seqs []int64
	for _, e := range page.Entries {
		seqs = append(seqs, e.Seq)
	}
	require.Equal(t, []int64{1, 4, 5, 6}, seqs, "the two oldest droppable entries went")
	require.Equal(t, int64(2), page.Dropped)
	keys := keysUnder(t, st, dir)
	require.NotContains(t, keys, fmt.Sprintf("%so/%020d", dir, 2), "a dropped entry's mark goes with it")
	require.Contains(t, keys, fmt.Sprintf("%so/%020d", dir, 4))
}

// The bound drops what a plain model of it drops, over a long run of
// progress, milestones and other changes: after every append, while more
// than the limit are kept, the oldest progress entry but the newest goes,
// else the oldest other droppable entry but the newest. A limit above the
// meta's queues (16 entries a tier) makes them refill from the history.
func TestHistoryBoundMatchesItsModel(t *testing.T) {
	t.Parallel()
	for _, limit := range []int{12, 70} {
		t.Run(fmt.Sprint("limit=", limit), func(t *testing.T) {
			t.Parallel()
			boundMatchesItsModel(t, limit)
		})
	}
}

func boundMatchesItsModel(t *testing.T, limit int) {
	small, err := engine.New(openStore(t), engine.Config{HistoryLimit: limit})
	require.NoError(t, err)
	full, err := engine.New(openStore(t), engine.Config{HistoryLimit: 1 << 20})
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(13, 15))
	ops := make([]int, 200)
	for i := range ops {
		ops[i] = rng.IntN(4)
	}
	play := func(eng *engine.Engine) string {
		f := createFlow(t, eng)
		task, _, err := eng.CreateTask(engine.CreateTaskInput{FlowID: f.ID, Status: sdk.TaskRunning})
		require.NoError(t, err)
		var off int64
		for i, op := range ops {
			switch op {
			case 0, 1: // progress, sometimes with a milestone
				frac := float64(i) / float64(len(ops))
				in := engine.ProgressInput{From: off, To: off + 1, Progress: &sdk.Progress{Fraction: &frac}}
				if op == 1 {
					in.Milestones = []sdk.Milestone{{Name: "m"}}
				}
				_, err = eng.RecordProgress(task.ID, in)
				off++
			default: // an ordinary change to the flow
				f, err = eng.GetFlow(f.ID)
				require.NoError(t, err)
				_, err = eng.UpdateFlow(f.ID, f.Revision, engine.FlowPatch{State: []byte(fmt.Sprintf(`{"i":%d}`, i))})
			}
			require.NoError(t, err)
		}
		return f.ID
	}
	smallID, fullID := play(small), play(full)
	all, err := full.History(fullID, 0, 0)
	require.NoError(t, err)
	require.Zero(t, all.Dropped)

	var kept []engine.HistoryEntry // the model
	drop := func(newest int64, progress bool) bool {
		for i, e := range kept {
			if e.Seq != newest && !e.Kind.Kept() && (e.Kind == engine.HistoryProgress) == progress {
				kept = append(kept[:i], kept[i+1:]...)
				return true
			}
		}
		return false
	}
	for _, e := range all.Entries {
		kept = append(kept, e)
		for len(kept) > limit && (drop(e.Seq, true) || drop(e.Seq, false)) {
		}
	}
	got, err := small.History(smallID, 0, 0)
	require.NoError(t, err)
	var want, have []string
	for _, e := range kept {
		want = append(want, fmt.Sprintf("%d %s", e.Seq, e.Kind))
	}
	for _, e := range got.Entries {
		have = append(have, fmt.Sprintf("%d %s", e.Seq, e.Kind))
	}
	require.Equal(t, want, have)
	require.Equal(t, int64(len(all.Entries)-len(kept)), got.Dropped)
}
