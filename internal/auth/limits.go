package auth

import (
	"context"
	"strings"

	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/refusal"
)

// LimitsPatch changes a user's own rate limits the way a JSON merge
// patch would: Reset drops every limit of its own first ("limits":
// null); then each entry of Set sets that limit (a value, 0 meaning
// unlimited) or, for nil, drops it, so the node's default applies again.
type LimitsPatch struct {
	Reset bool
	Set   map[string]*int64
}

// PatchLimits changes a user's own rate limits; only an admin who
// manages the user may (nobody raises its own limits without one). The
// change applies to the user's next request on every node, with no
// restart: the record's version moves, and each node reads the limits
// with the credentials it verified.
func (m *Manager) PatchLimits(ctx context.Context, actor Principal, name string, p LimitsPatch) (UserView, error) {
	for field, v := range p.Set {
		if (&meta.Limits{}).Field(field) == nil {
			return UserView{}, refusal.New(refusal.ErrInvalid, 0, "limits.%s is not a limit; the limits are %s", field, strings.Join(meta.LimitNames, ", "))
		}
		if v != nil {
			if err := meta.CheckRate(field, *v); err != nil {
				return UserView{}, refusal.New(refusal.ErrInvalid, 0, "%v", err)
			}
		}
	}
	u, err := m.target(actor, name, false)
	if err != nil {
		return UserView{}, err
	}
	var next meta.Limits
	if u.Limits != nil && !p.Reset {
		next = *u.Limits
	}
	for _, field := range meta.LimitNames {
		if v, ok := p.Set[field]; ok {
			*next.Field(field) = v
		}
	}
	l := &next
	if l.Empty() {
		l = nil
	}
	if err := m.store.SetLimits(ctx, u.Name, l); err != nil {
		return UserView{}, m.mapErr(err)
	}
	u.Limits = l
	return m.view(u), nil
}
