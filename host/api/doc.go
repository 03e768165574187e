// Package api is how commands reach flowgate's records: the Client
// interface, served in-process by Local when no gateway runs, and (in a
// later layer) over the gateway's unix socket as HTTP/JSON.
package api
