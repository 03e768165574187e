// Package etcd is flowgate's distributed store backend: store.Store on
// etcd v3, for installations that outgrow one machine. The engine runs on
// it unchanged; storetest and the engine's own tests run against it and
// against bbolt.
//
// # Keys and revisions
//
// Every key lives under the installation's prefix (Options.Prefix, such as
// /flowgate/prod/), so several installations share one etcd cluster. A
// key's revision is etcd's per-key Version: 1 when created, one more on
// each Put, back to 1 after a delete, exactly the store's rule. A
// flow's revision is therefore its key's Version.
//
// # Transactions
//
// View reads one snapshot: its first read is linearizable and fixes the
// etcd revision every later read is made at. Scans read a page of keys at
// a time (Options.PageSize).
//
// Update is an optimistic transaction, like etcd's own STM with
// serializable isolation. The function runs against a snapshot, read
// serializably (from the member's own copy, without waiting for the
// writes in flight, which halves a guarded write's latency under load),
// with its writes kept in memory (it reads its own writes); then one Txn
// applies them all, guarded by what it read:
//
//	If(ModRevision(k) = as read, for every key it got or a scan passed on;
//	   ModRevision < snapshot+1 over every range it scanned)
//	Then(Put and Delete every key it wrote)
//	Else(Get every key compared one by one)
//
// Its point reads (Get, and the revision a Put starts from) are first
// answered from the Store's cache of what it last read and wrote
// (Options.CacheSize keys, absent keys included, its own commits entered
// at the Txn's revision), then from a scan of the same Update that covered
// the key, and only then read from etcd; so a guarded write of a flow this
// Store wrote before is that one Txn and no read. A stale cache entry
// fails the compare; the Else reads the compared keys back into the cache
// in the same round trip.
//
// store.Create, for a key the caller knows to be new (the next entry of a
// flow's history), reads nothing: the reader takes a key it knows
// nothing of to be absent (AssumeAbsent) and the Txn compares that it is
// (ModRevision = 0). A wrong guess fails the Txn, whose Else reads the key
// back; the function's second run sees it and Create refuses with
// store.ErrKeyExists. So a flow update is one Txn even though each one
// creates a history entry no cache has seen.
//
// etcd serves a scan in descending key order by reading the whole range
// and sorting it (the limit applies after the sort), so a reverse scan
// costs as much as the range holds, values included, however few keys it
// asks for. A flow's history append used one (for the newest entry) and
// grew slower as the history grew; it now reads a point record instead.
// The engine's newest-first lists still scan in reverse.
// A guarded write of a flow is thus one Txn that compares the flow's
// ModRevision (which moves whenever its Version does, and also when the
// key is deleted and re-created) and puts the flow, its indexes and its
// history entries together. When the compare fails, another writer got
// there first: the function runs again on a fresh snapshot, where it sees
// the newer record and refuses with sdk.ErrRevisionConflict as on bbolt.
// The store's contract already says a function may run more than once.
// Up to Options.MaxAttempts runs (from the third, without the cache), then
// it fails. An Update that wrote nothing, or whose function returned an
// error, still checks its reads with the same compares in a read-only Txn
// (linearizable), so a refusal it reports was true at that point; a stale
// snapshot only ever costs another run.
//
// storetest's linearizability check (porcupine over concurrent guarded
// writes and reads) passes on this backend.
//
// # Limits
//
// etcd takes at most 128 operations and 1.5 MiB in one request by
// default (--max-txn-ops, --max-request-bytes; set Options.MaxTxnOps and
// MaxRequestBytes to the cluster's values). A change over them fails with
// an error wrapping store.ErrTxnTooLarge before anything is sent: it is
// never half-written. The compares are kept within the limit this way:
// every key the function got is compared, overlapping scanned ranges are
// one compare, keys a scan passed on are compared one by one as far as
// room is left (a change to them is still caught by their range, their
// deletion only by their own compare), and keys read only to number a Put
// (store.RevisionReader) are compared one by one when they fit and
// otherwise by one range per directory. A change that empties a scanned
// range (it deletes every key it saw there and writes nothing else there,
// as pruning a flow's history does) deletes it with one range operation,
// whatever the number of keys.
//
// One Txn holds one operation per key, so within one Update the last
// write of a key is what etcd sees: a key Put several times gains one
// Version, and a key deleted and written again continues its Version
// rather than starting again at 1 (the revision Put returned inside the
// transaction is then not the one stored). The engine relies on neither:
// it writes a flow at most once per transaction and never deletes one
// there.
//
// # Failures
//
// A request that fails on the way (etcd unreachable, a timeout of
// Options.RequestTimeout) fails the call with an error wrapping
// store.ErrWriteFailed that says what to check; a commit that failed this
// way may or may not have been applied. Every request is also bounded by
// the context of the call it serves: when that ends first, the call fails
// at once with an error wrapping the context's error (and, for a commit
// on its way, store.ErrWriteFailed too), and etcd's health is not marked
// down for it.
//
// # Several processes
//
// A gateway joins the installation as a Member (Join): a session lease of
// its own, to which its record (host, pid, address, labels, heartbeat),
// its drain mark (Drain) and its holds are bound, beside the prefix under
// PREFIX.members/ and PREFIX.drain/. A member campaigns for a role with
// Campaign (etcd's concurrency.Election under PREFIX.leader/ROLE); the
// Leadership's Fence is the leader key and its creation revision, and
// UpdateFenced (store.Fencer) commits a change only while that key is
// the one created then, checked in the change's own Txn. A Roster
// (WatchMembers) follows who the members are, by a watch on
// PREFIX.members/, so that the others take a member's work as soon as it
// leaves or its lease ends.
package etcd
