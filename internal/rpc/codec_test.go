package rpc

import "testing"

// A commit of tens of KiB gets a buffer of its own power of two, not
// gRPC's next default tier (1 MiB), whose whole capacity is cleared on
// every Get.
func TestBufferPoolFitsTheMessage(t *testing.T) {
	for _, size := range []int{300, 5_000, 50_000, 700_000, 5 << 20} {
		buf := bufferPool.Get(size)
		if len(*buf) != size || cap(*buf) >= 2*size {
			t.Errorf("Get(%d): len %d cap %d, want len %d and cap < %d", size, len(*buf), cap(*buf), size, 2*size)
		}
		bufferPool.Put(buf)
	}
}
