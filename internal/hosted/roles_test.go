package hosted

import (
	"reflect"
	"slices"
	"testing"

	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/replica"
)

// Every field of a replica.View either starts a new role (roleChanged)
// or is passed to the running one (sameView false): a field added to the
// View and left out of both would never reach a running role — as
// InSyncVersion once did not, and a leader proposed on a stale version
// forever. The partition's key (topic, partition) picks the role itself.
func TestEveryViewFieldReachesTheRole(t *testing.T) {
	base := replica.View{Topic: "t", Incarnation: 1, Partition: 0, Leader: "n1", Epoch: 2, Replicas: []string{"n1", "n2"},
		InSync: []string{"n1", "n2"}, EpochStarts: []meta.EpochStart{{Epoch: 2, Offset: 5}}, InSyncVersion: 3}
	typ := reflect.TypeOf(base)
	for i := range typ.NumField() {
		f := typ.Field(i)
		if f.Name == "Topic" || f.Name == "Partition" {
			continue
		}
		v := base
		v.Replicas, v.InSync, v.EpochStarts = slices.Clone(base.Replicas), slices.Clone(base.InSync), slices.Clone(base.EpochStarts)
		fv := reflect.ValueOf(&v).Elem().Field(i)
		switch fv.Kind() {
		case reflect.String:
			fv.SetString(fv.String() + "x")
		case reflect.Uint64:
			fv.SetUint(fv.Uint() + 1)
		case reflect.Int:
			fv.SetInt(fv.Int() + 1)
		case reflect.Slice:
			fv.Set(reflect.Append(fv, reflect.New(fv.Type().Elem()).Elem()))
		default:
			t.Fatalf("field %s of kind %s: teach this test to change it", f.Name, fv.Kind())
		}
		h := &Role{view: base, leader: nil}
		if !roleChanged(h, v, "n2") && sameView(base, v) {
			t.Errorf("a change of View.%s reaches neither a new role nor the running one", f.Name)
		}
	}
}
