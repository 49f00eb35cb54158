package broker

import (
	"fmt"

	"github.com/narad-io/narad/internal/header"
	"github.com/narad-io/narad/internal/storage"
)

// idRecs builds records carrying the given msg ids ("" for none).
func idRecs(ids ...string) []storage.Record {
	recs := make([]storage.Record, len(ids))
	for i, id := range ids {
		recs[i].Payload = []byte(fmt.Sprintf("p%d", i))
		if id != "" {
			recs[i].Headers = []header.Header{{Name: header.MsgID, Value: id}}
		}
	}
	return recs
}
