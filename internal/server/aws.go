package server

import (
	"errors"
	"log/slog"
	"net/http"

	"github.com/narad-io/narad/internal/auth"
	"github.com/narad-io/narad/internal/awsapi"
	"github.com/narad-io/narad/internal/clock"
	"github.com/narad-io/narad/internal/config"
	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/metrics"
)

// awsEdge puts the SQS and SNS protocol edge (package awsapi) in front of
// the API and the console on the client listener: one endpoint URL for
// every protocol, as AWS's SDKs expect.
func awsEdge(cfg config.Config, api, next http.Handler, verify awsapi.Verifier, m *metrics.Metrics, log *slog.Logger) http.Handler {
	return awsapi.New(awsapi.Options{API: api, Next: next, Verify: verify,
		AccountID: cfg.AWS.AccountID, Region: cfg.AWS.Region, Log: log, Metrics: m})
}

// awsVerifier authenticates the edge's requests (docs/aws.md,
// "Endpoint and credentials"). With security on, a request must carry a
// valid signature of a user's access key, unsealed with the same sealer
// the users API sealed it with, and acts as that user. With security
// off, any well-formed signature passes, as does an unsigned request,
// and the request acts as nobody in particular, as /v1 requests do there.
func awsVerifier(cfg config.Config, ms *meta.Store, sealer *auth.Sealer) awsapi.Verifier {
	if !cfg.Security.Enabled {
		return func(r *http.Request, _ []byte) (auth.Principal, bool, error) {
			return auth.Principal{}, false, signatureErr(auth.CheckSigV4Shape(r))
		}
	}
	v := auth.NewSigV4(auth.NewKeyRing(ms, sealer), cfg.AWS.Region, clock.Real)
	return func(r *http.Request, body []byte) (auth.Principal, bool, error) {
		p, _, err := v.Verify(r, body)
		if err != nil {
			return auth.Principal{}, false, signatureErr(err)
		}
		return p, true, nil
	}
}

// signatureErr turns the verifier's refusal into the edge's; any other
// error (a key that would not unseal) stays as it is, answered as the
// node's fault.
func signatureErr(err error) error {
	var se *auth.SigV4Error
	if errors.As(err, &se) {
		return awsapi.SignatureError(se.Code, se.Status, se.Message)
	}
	return err
}
