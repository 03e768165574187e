package sdk

import (
	"testing"

	"github.com/stretchr/testify/require"

	pb "github.com/flowgate/flowgate/sdk/internal/proto"
)

// TestStagesFromProtoNilForNone: no stages on the wire are nil stages, on
// the plugin's end as on the gateway's (pluginclient), so a list that
// crossed compares equal whichever way it went.
func TestStagesFromProtoNilForNone(t *testing.T) {
	t.Parallel()
	require.Nil(t, stagesFromProto(&pb.ListStagesResponse{}))
	require.Nil(t, stagesFromProto(nil))
	require.Equal(t, []Stage{{Name: "llm.invoke", Plugin: "p"}},
		stagesFromProto(&pb.ListStagesResponse{Stages: []*pb.StageInfo{{Name: "llm.invoke", Plugin: "p"}}}))
}
