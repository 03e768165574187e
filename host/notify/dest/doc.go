// Package dest sends flowgate's messages to the places people read:
// destinations.
//
// # Specs
//
// A destination is written as one spec:
//
//   - a name from the gateway config's notify: map (notify: {ops:
//     "slack://…"}), which stays in that file, secrets and all;
//   - cmd:COMMAND, a command run with the notice JSON on stdin and
//     FLOWGATE_NOTICE_KEY in its environment (which is otherwise only
//     the base environment of host/shell.BaseEnv);
//   - an http:// or https:// URL, POSTed the notice JSON with the
//     notice's key as Idempotency-Key;
//   - a URL of any service shoutrrr knows (slack://, discord://,
//     teams://, telegram://, smtp://, ntfy://, gotify://,
//     generic+https://, …), sent the text the notice's template
//     renders (see Template), its first line as the title.
//
// # Secrets
//
// A spec may hold ${VAR} refs to variables of the gateway's environment
// (the meaning --secret-env VAR has for triggers). A spec is stored as
// written; its refs are expanded only when a message is sent, in
// memory. Check refuses a spec given on the command line with a literal
// secret in it; Redact shows a spec with its literal credentials masked
// and its refs as written; and every error Book.Send returns has the
// expanded values and a named destination's URL masked, so it may be
// logged and stored.
//
// # Sending
//
// A Book, built from the config's named destinations (NewBook checks
// them all, so a gateway with a bad one does not start), sends one
// message to one spec with Send. It tries once: retrying with backoff,
// and the at-least-once bookkeeping, belong to the notice outbox
// (host/engine) and its deliverer (host/notify).
package dest
