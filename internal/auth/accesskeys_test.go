package auth

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/narad-io/narad/internal/apierr"
	"github.com/narad-io/narad/internal/clock"
	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/meta/metatest"
)

func TestSealer(t *testing.T) {
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "meta", "access-keys.key")
	for _, c := range []struct {
		name string
		s    *Sealer
	}{
		{"cluster secret", NewSealer([]byte("a cluster secret"), "")},
		{"key file", NewSealer(nil, keyFile)},
	} {
		t.Run(c.name, func(t *testing.T) {
			secret := newSecretAccessKey()
			sealed, err := c.s.Seal(keyA, secret)
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(sealed, []byte(secret)) {
				t.Fatal("the sealed bytes hold the secret")
			}
			if got, err := c.s.Unseal(keyA, sealed); err != nil || got != secret {
				t.Fatalf("Unseal = %q, %v", got, err)
			}
			if _, err := c.s.Unseal(keyB, sealed); err == nil {
				t.Fatal("a sealed secret moved to another key id unsealed")
			}
			sealed[len(sealed)-1] ^= 1
			if _, err := c.s.Unseal(keyA, sealed); err == nil {
				t.Fatal("a changed sealed secret unsealed")
			}
		})
	}
	// The key file is made once, 0600, and kept: a new Sealer on it
	// opens what the first sealed; one on another secret does not.
	fi, err := os.Stat(keyFile)
	if err != nil || fi.Mode().Perm() != 0o600 || fi.Size() != 32 {
		t.Fatalf("key file: %v %v", fi, err)
	}
	sealed, _ := NewSealer(nil, keyFile).Seal(keyA, "s3cr3t")
	if got, err := NewSealer(nil, keyFile).Unseal(keyA, sealed); err != nil || got != "s3cr3t" {
		t.Fatalf("reopened key file: %q %v", got, err)
	}
	if _, err := NewSealer([]byte("another"), "").Unseal(keyA, sealed); err == nil {
		t.Fatal("another sealing key opened it")
	}
	a, _ := NewSealer([]byte("same secret"), "").Seal(keyA, "x")
	if got, err := NewSealer([]byte("same secret"), "").Unseal(keyA, a); err != nil || got != "x" {
		t.Fatalf("two nodes of one cluster secret: %q %v", got, err)
	}
}

const (
	keyA = "NKIAAAAAAAAAAAAAAAAA"
	keyB = "NKIABBBBBBBBBBBBBBBB"
)

var (
	keyIDRE  = regexp.MustCompile(`^NKIA[A-Z2-7]{16}$`)
	secretRE = regexp.MustCompile(`^[A-Za-z0-9/+]{40}$`)
)

// keysEnv is a real metastore with a root admin, alice (produce on
// orders) and ops (an admin of orders only), managed by a Manager that
// seals keys.
type keysEnv struct {
	ms               *meta.Store
	m                *Manager
	sealer           *Sealer
	root, alice, ops Principal
	ctx              context.Context
	aliceGrants      []meta.Grant
}

func newKeysEnv(t *testing.T) *keysEnv {
	t.Helper()
	e := &keysEnv{ms: metatest.Leader(t, t.TempDir(), "n1"), ctx: context.Background()}
	e.sealer = NewSealer([]byte("test cluster secret"), "")
	e.m = NewManager(e.ms, func(err error) error { return err }, meta.Rates{}).SealAccessKeys(e.sealer)
	e.root = Principal{Name: "root", Grants: RootGrants}
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(e.m.Create(e.ctx, e.root, "root", "root-password", RootGrants, nil))
	e.aliceGrants = []meta.Grant{{Action: meta.ActionProduce, Patterns: []string{"orders"}}}
	opsGrants := []meta.Grant{{Action: meta.ActionAdmin, Patterns: []string{"orders"}}}
	must(e.m.Create(e.ctx, e.root, "alice", "alice-password", e.aliceGrants, nil))
	must(e.m.Create(e.ctx, e.root, "ops", "ops-password", opsGrants, nil))
	u, _ := e.ms.User("alice")
	e.alice = principal(u)
	u, _ = e.ms.User("ops")
	e.ops = principal(u)
	u, _ = e.ms.User("root")
	e.root = principal(u)
	return e
}

func TestAccessKeysThroughTheManager(t *testing.T) {
	e := newKeysEnv(t)
	k1, err := e.m.CreateAccessKey(e.ctx, e.alice, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if !keyIDRE.MatchString(k1.AccessKeyID) || !secretRE.MatchString(k1.SecretAccessKey) || k1.CreatedAt == 0 {
		t.Fatalf("new key %+v", k1)
	}
	// Stored sealed: not in the record, nor in the metastore's files.
	u, _ := e.ms.User("alice")
	if len(u.AccessKeys) != 1 || u.AccessKeys[0].ID != k1.AccessKeyID || bytes.Contains(u.AccessKeys[0].Sealed, []byte(k1.SecretAccessKey)) {
		t.Fatalf("stored %+v", u.AccessKeys)
	}
	if got, err := e.sealer.Unseal(k1.AccessKeyID, u.AccessKeys[0].Sealed); err != nil || got != k1.SecretAccessKey {
		t.Fatalf("unseal: %q %v", got, err)
	}
	if _, err := e.sealer.Unseal(keyB, u.AccessKeys[0].Sealed); err == nil {
		t.Fatal("the sealed secret opened as another key's")
	}

	// An admin of what alice holds manages hers; the root admin too.
	k2, err := e.m.CreateAccessKey(e.ctx, e.ops, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.m.CreateAccessKey(e.ctx, e.root, "alice"); apierr.Status(err) != http.StatusConflict || !strings.Contains(err.Error(), "the most a user may hold") {
		t.Fatalf("a third key: %v", err)
	}
	list, err := e.m.ListAccessKeys(e.alice, "alice")
	if err != nil || len(list) != 2 || list[0].AccessKeyID != k1.AccessKeyID || list[1].AccessKeyID != k2.AccessKeyID {
		t.Fatalf("list: %+v %v", list, err)
	}

	// Not anyone else's: alice is no admin, ops does not cover root.
	for _, c := range []struct {
		actor Principal
		name  string
	}{{e.alice, "ops"}, {e.ops, "root"}} {
		if _, err := e.m.CreateAccessKey(e.ctx, c.actor, c.name); apierr.Status(err) != http.StatusForbidden {
			t.Errorf("%s creating %s's key: %v", c.actor.Name, c.name, err)
		}
		if _, err := e.m.ListAccessKeys(c.actor, c.name); apierr.Status(err) != http.StatusForbidden {
			t.Errorf("%s listing %s's keys: %v", c.actor.Name, c.name, err)
		}
		if err := e.m.DeleteAccessKey(e.ctx, c.actor, c.name, keyA); apierr.Status(err) != http.StatusForbidden {
			t.Errorf("%s deleting %s's key: %v", c.actor.Name, c.name, err)
		}
	}
	if err := e.m.DeleteAccessKey(e.ctx, e.alice, "alice", keyA); apierr.Status(err) != http.StatusNotFound {
		t.Fatalf("deleting an unknown key: %v", err)
	}
	if err := e.m.DeleteAccessKey(e.ctx, e.alice, "alice", k1.AccessKeyID); err != nil {
		t.Fatal(err)
	}
	if list, _ := e.m.ListAccessKeys(e.root, "alice"); len(list) != 1 || list[0].AccessKeyID != k2.AccessKeyID {
		t.Fatalf("after delete: %+v", list)
	}
	// The user's view never shows keys, let alone sealed secrets.
	v, _ := e.m.Get(e.root, "alice")
	if js, _ := json.Marshal(v); strings.Contains(string(js), "key") || strings.Contains(string(js), "sealed") {
		t.Fatalf("user view %s", js)
	}

	if err := e.m.Delete(e.ctx, e.root, "alice"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.m.Create(e.ctx, e.root, "alice", "alice-password", e.aliceGrants, nil); err != nil {
		t.Fatal(err)
	}
	if list, err := e.m.ListAccessKeys(e.root, "alice"); err != nil || len(list) != 0 {
		t.Fatalf("a re-created alice's keys: %+v %v", list, err)
	}
}

// Without a sealer access keys are refused, not stored in clear.
func TestAccessKeysNeedASealer(t *testing.T) {
	e := newKeysEnv(t)
	m := NewManager(e.ms, func(err error) error { return err }, meta.Rates{})
	if _, err := m.CreateAccessKey(e.ctx, e.root, "alice"); apierr.Status(err) != http.StatusServiceUnavailable {
		t.Fatalf("create without a sealer: %v", err)
	}
}

// End to end: a key made through the Manager signs a request the
// verifier accepts as alice, with her grants, through a KeyRing over the
// real metastore; once revoked, the key is unknown.
func TestSigV4WithAKeyOfTheMetastore(t *testing.T) {
	e := newKeysEnv(t)
	k, err := e.m.CreateAccessKey(e.ctx, e.alice, "alice")
	if err != nil {
		t.Fatal(err)
	}
	clk := clock.NewFake(exampleTime)
	v := NewSigV4(NewKeyRing(e.ms, e.sealer), "", clk)
	req := func() *http.Request {
		r := sqsRequest(sqsBody)
		signV4(r, []byte(sqsBody), k.AccessKeyID, k.SecretAccessKey, "us-east-1", "sqs", exampleTime)
		return r
	}
	p, service, err := v.Verify(req(), []byte(sqsBody))
	if err != nil || service != "sqs" || p.Name != "alice" || p.ID != e.alice.ID || len(p.Grants) != 1 || p.Grants[0].Action != meta.ActionProduce {
		t.Fatalf("Verify: %+v %q %v, want alice as Basic auth gives her (%+v)", p, service, err, e.alice)
	}
	// A grants change shows at once.
	if _, err := e.m.SetGrants(e.ctx, e.root, "alice", nil); err != nil {
		t.Fatal(err)
	}
	if p, _, err := v.Verify(req(), []byte(sqsBody)); err != nil || len(p.Grants) != 0 {
		t.Fatalf("after the grants change: %+v %v", p, err)
	}
	if err := e.m.DeleteAccessKey(e.ctx, e.alice, "alice", k.AccessKeyID); err != nil {
		t.Fatal(err)
	}
	if _, _, err := v.Verify(req(), []byte(sqsBody)); sigCode(err) != SigV4InvalidClientToken {
		t.Fatalf("a revoked key: %v", err)
	}
}
