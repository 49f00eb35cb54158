package move

import "testing"

// BenchmarkAdmit is the hook every commit passes through (broker.Admission):
// one map lookup under a mutex and a shared lock, from many committers.
func BenchmarkAdmit(b *testing.B) {
	var adm interface {
		Admit(topic string, p int) (func(), bool)
	} = NewFreezes(nil, nil)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			done, ok := adm.Admit("orders", 0)
			if !ok {
				b.Fatal("refused")
			}
			done()
		}
	})
}
