package awsattr

import (
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"sort"
)

// referenceMD5 is botocore's MD5OfMessageAttributes check, written out
// independently of the package's code: names sorted, then per attribute
// name, type, transport byte and value, each string prefixed by its
// length as 4 big-endian bytes.
func referenceMD5(attrs []Attribute) string {
	names := make([]string, 0, len(attrs))
	by := map[string]Attribute{}
	for _, a := range attrs {
		names = append(names, a.Name)
		by[a.Name] = a
	}
	sort.Strings(names)
	var buf bytes.Buffer
	lp := func(b []byte) {
		n := len(b)
		buf.Write([]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)})
		buf.Write(b)
	}
	for _, n := range names {
		a := by[n]
		lp([]byte(n))
		lp([]byte(a.DataType))
		if a.BinaryValue != nil {
			buf.WriteByte(2)
			lp(a.BinaryValue)
		} else {
			buf.WriteByte(1)
			lp([]byte(a.StringValue))
		}
	}
	sum := md5.Sum(buf.Bytes())
	return hex.EncodeToString(sum[:])
}
