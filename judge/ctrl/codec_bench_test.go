package ctrl

import "testing"

// BenchmarkCodec measures what the guest spends its time on: encoding a
// write, decoding a Get's reply, and decoding a List of Pods into a
// PodList (which cuts small slices from shared slabs):
//
//	go test -run '^$' -bench Codec -benchmem ./judge/ctrl/
func BenchmarkCodec(b *testing.B) {
	objs := sampleObjects()
	wire := make([][]byte, len(objs))
	for i, o := range objs {
		wire[i] = AppendObject(nil, o)
	}
	b.Run("encode", func(b *testing.B) {
		var buf []byte
		for b.Loop() {
			for _, o := range objs {
				buf = AppendObject(buf[:0], o)
			}
		}
	})
	b.Run("decode", func(b *testing.B) {
		for b.Loop() {
			for _, w := range wire {
				if _, err := DecodeObject(w); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	pods := make([]Object, 50)
	for i := range pods {
		pods[i] = objs[1]
	}
	reply := AppendReply(nil, OpList, &Reply{Items: pods})
	b.Run("list50pods", func(b *testing.B) {
		for b.Loop() {
			var r Reply
			var l PodList
			if err := decodeReply(OpList, string(reply), nil, &l, &r); err != nil || len(l.Items) != 50 {
				b.Fatal(err, len(l.Items))
			}
		}
	})
}
