package fanout

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"time"

	"github.com/narad-io/narad/client"
	"github.com/narad-io/narad/internal/storage"
)

// remoteCommitter is a remote child's commit seam: a route.Committer built
// on the public client, so a remote child's slab goes out the way any
// client's batch produce does (F26). The topic it is given is the remote
// child's name here; the child's record names the target, read at every
// commit because its credentials may change. The partition is the
// sender's lane and means nothing to the target, which places records by
// key itself.
type remoteCommitter struct {
	meta Metastore
	hc   *http.Client // shared by every target; verifies TLS certificates by default (F30)
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
// that is not UTF-8 arrives with replacement characters). A refusal that
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

func (r *remoteCommitter) close() { r.hc.CloseIdleConnections() }

// refusedError is a record the target refuses, named by its parent offset:
// the link stops there, and nothing is skipped without an operator (F28).
type refusedError struct {
	offset uint64
	err    error
}

func (e *refusedError) Error() string {
	return fmt.Sprintf("the target refuses the record at parent offset %d: %v", e.offset, e.err)
}

func (e *refusedError) Unwrap() error { return e.err }
