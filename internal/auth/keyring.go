package auth

import (
	"sync"

	"github.com/narad-io/narad/internal/meta"
)

// KeyUsers is what resolving access keys reads from the metastore's local
// replica (meta.Store).
type KeyUsers interface {
	Users
	Users() []meta.User
}

// KeySecret is an access key resolved: the user holding it, as the same
// Principal Basic auth gives that user, and the key's secret. Version is
// the user record's version it was read from: it changes whenever the
// record does.
type KeySecret struct {
	Principal Principal
	Secret    string
	Version   uint64
}

// KeySecrets resolves an access key ID (KeyRing). ok is false when no
// user holds the key; err is a failure to read or unseal it.
type KeySecrets interface {
	AccessKeySecret(id string) (s KeySecret, ok bool, err error)
}

// KeyRing resolves access key IDs against the users of the local replica,
// unsealing each secret once: unsealed secrets live in memory only,
// keyed by key ID, and an entry is dropped, or read and unsealed again,
// as soon as its user's record changes. While the users domain does not
// move, a lookup is one atomic load and a map lookup; an unknown ID
// costs the same (the index of key IDs is rebuilt at most once per
// users-domain version, never per request).
type KeyRing struct {
	users  KeyUsers
	sealer *Sealer

	mu      sync.Mutex
	indexed bool
	indexAt uint64            // users-domain version index was built at
	index   map[string]string // key ID → user name
	keys    map[string]ringKey
}

type ringKey struct {
	domainVersion uint64 // users-domain version when last confirmed
	user          string
	s             KeySecret
}

// NewKeyRing resolves keys of users, unsealing with sealer.
func NewKeyRing(users KeyUsers, sealer *Sealer) *KeyRing {
	return &KeyRing{users: users, sealer: sealer, keys: make(map[string]ringKey)}
}

// AccessKeySecret resolves the key id.
func (k *KeyRing) AccessKeySecret(id string) (KeySecret, bool, error) {
	v := k.users.UsersVersion()
	k.mu.Lock()
	defer k.mu.Unlock()
	if e, ok := k.keys[id]; ok {
		if e.domainVersion == v {
			return e.s, true, nil
		}
		if u, found := k.users.User(e.user); found && u.Version == e.s.Version {
			e.domainVersion = v // some other user changed; this one did not
			k.keys[id] = e
			return e.s, true, nil
		}
		delete(k.keys, id)
	}
	if !k.indexed || k.indexAt != v {
		k.reindex(v)
	}
	name, ok := k.index[id]
	if !ok {
		return KeySecret{}, false, nil
	}
	u, found := k.users.User(name)
	key, has := u.AccessKey(id)
	if !found || !has {
		return KeySecret{}, false, nil
	}
	secret, err := k.sealer.Unseal(id, key.Sealed)
	if err != nil {
		return KeySecret{}, false, err
	}
	s := KeySecret{Principal: principal(u), Secret: secret, Version: u.Version}
	k.keys[id] = ringKey{domainVersion: v, user: u.Name, s: s}
	return s, true, nil
}

// reindex maps every key ID of the replica to its user, and forgets the
// unsealed secrets of keys that are gone.
func (k *KeyRing) reindex(v uint64) {
	index := make(map[string]string)
	for _, u := range k.users.Users() {
		for _, key := range u.AccessKeys {
			index[key.ID] = u.Name
		}
	}
	for id := range k.keys {
		if _, ok := index[id]; !ok {
			delete(k.keys, id)
		}
	}
	k.index, k.indexAt, k.indexed = index, v, true
}
