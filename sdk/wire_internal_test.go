package sdk

import (
	"testing"

	"github.com/stretchr/testify/require"

	pb "github.com/flowgate/flowgate/sdk/internal/proto"
)

// TestStagesFromProtoNilForNone: no stages on the wire are nil stages,
// in an Info as in a ListStages answer, so a list that crossed compares
// equal whichever way it went.
func TestStagesFromProtoNilForNone(t *testing.T) {
	t.Parallel()
	require.Nil(t, stagesFromProto((&pb.ListStagesResponse{}).GetStages()))
	require.Nil(t, stagesFromProto(nil))
	require.Equal(t, []Stage{{Name: "llm.invoke", Plugin: "p"}},
		stagesFromProto([]*pb.StageInfo{{Name: "llm.invoke", Plugin: "p"}}))
}
