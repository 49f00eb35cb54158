package fanout

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/narad-io/narad/client"
	"github.com/narad-io/narad/internal/header"
	"github.com/narad-io/narad/internal/storage"
)

// remoteCommitter is a remote child's commit seam: a route.Committer built
// on the public client, so a remote child's slab goes out the way any
// client's batch produce does (rule: lanes by key). The topic it is given
// is the remote child's name here; the child's record names the target,
// read at every commit because its credentials may change. The partition is
// the sender's lane and means nothing to the target, which places records
// by key itself.
type remoteCommitter struct {
	meta Metastore
	hc   *http.Client // shared by every target; verifies TLS certificates by default
}

// remoteTimeout bounds one batch produce to a target.
const remoteTimeout = 30 * time.Second

func newRemoteCommitter(ms Metastore) *remoteCommitter {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = 2 * remoteLanes
	return &remoteCommitter{meta: ms, hc: &http.Client{Transport: t}}
}

// Commit sends recs through the target's batch produce. Payloads go as
// payload_base64, so the bytes arrive exactly; keys as JSON strings (a key
// that is not UTF-8 arrives with replacement characters); headers as
// "headers", the broker's own under remoteHeaders' rule. A refusal that
// names the failing record comes back as a *refusedError naming its
// parent offset.
func (r *remoteCommitter) Commit(ctx context.Context, child string, _ uint64, _ int, recs []storage.Record) error {
	t, ok := r.meta.Topic(child)
	if !ok || t.Remote == nil {
		return fmt.Errorf("%w: %q is no longer a remote child", errStopped, child)
	}
	target := *t.Remote
	batch := make([]client.BatchRecord, len(recs))
	for i, rec := range recs {
		batch[i].PayloadBase64 = base64.StdEncoding.EncodeToString(rec.Payload)
		if len(rec.Key) > 0 {
			k := string(rec.Key)
			batch[i].Key = &k
		}
		batch[i].Headers = remoteHeaders(rec.Headers)
		if id, ok := header.MsgIDOf(rec.Headers); ok {
			// The producer id crosses as what it is, so a target topic with
			// a dedupe window stores a retried copy once (and stores it as
			// its own narad-msg-id).
			batch[i].MsgID = id
			delete(batch[i].Headers, remoteReservedPrefix+strings.TrimPrefix(header.MsgID, header.ReservedPrefix))
			if len(batch[i].Headers) == 0 {
				batch[i].Headers = nil
			}
		}
	}
	cctx, cancel := context.WithTimeout(ctx, remoteTimeout)
	defer cancel()
	_, err := client.New(target.URL, target.Username, target.Password, r.hc).ProduceBatch(cctx, target.Topic, batch)
	if err == nil {
		return nil
	}
	if i, named := client.RefusedIndex(err); named && i < len(recs) {
		return &refusedError{offset: recs[i].Offset, err: err}
	}
	return fmt.Errorf("target %s: %w", target.URL, err)
}

// remoteReservedPrefix is what a reserved header's "narad-" becomes on
// its way to a remote cluster.
const remoteReservedPrefix = "narad."

// remoteHeaders is a record's headers as its remote copy carries them. A
// remote child copies through the other cluster's public API, which refuses
// the reserved names (narad-…) from any client, this broker included; so a
// reserved header arrives with "narad-" replaced by "narad."
// (narad-dlq-topic arrives as narad.dlq-topic): kept, of the same length,
// and no longer claiming to be the target broker's own — except the
// producer id (narad-msg-id), which Commit sends as the record's msg_id, so
// that it arrives as the target's narad-msg-id. A client header that
// already has the new name gives way to the broker's. The target's client
// caps apply to the copy: a record whose broker headers take it past 64
// headers or 16 KiB is refused there, and the link stops at it as for any
// refused record (rule: refusal stops the link) — except for the source id
// (narad-source-id, which every copy carries): it goes only where it fits
// the target's caps, so a record that fitted them before message ids
// existed is not refused for it.
func remoteHeaders(hs []header.Header) map[string]string {
	if len(hs) == 0 {
		return nil
	}
	out := make(map[string]string, len(hs))
	for _, h := range hs {
		if !strings.HasPrefix(h.Name, header.ReservedPrefix) {
			out[h.Name] = h.Value
		}
	}
	var source *header.Header
	for i, h := range hs {
		if h.Name == header.SourceID {
			source = &hs[i]
			continue
		}
		if rest, ok := strings.CutPrefix(h.Name, header.ReservedPrefix); ok {
			out[remoteReservedPrefix+rest] = h.Value
		}
	}
	if source != nil {
		name := remoteReservedPrefix + strings.TrimPrefix(source.Name, header.ReservedPrefix)
		count, size := len(out)+1, len(name)+len(source.Value)
		for n, v := range out {
			if n == name { // a client's header of that name gives way
				count--
				continue
			}
			size += len(n) + len(v)
		}
		if count <= header.MaxCount && size <= header.MaxBytes {
			out[name] = source.Value
		}
	}
	return out
}

func (r *remoteCommitter) close() { r.hc.CloseIdleConnections() }

// refusedError is a record the target refuses, named by its parent offset:
// the link stops there, and nothing is skipped without an operator (rule:
// refusal stops the link).
type refusedError struct {
	offset uint64
	err    error
}

func (e *refusedError) Error() string {
	return fmt.Sprintf("the target refuses the record at parent offset %d: %v", e.offset, e.err)
}

func (e *refusedError) Unwrap() error { return e.err }
