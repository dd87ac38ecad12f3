/* fake_cudnn_legacy.c: the legacy-API names of libfake_cudnn.so. The shim's
 * loader resolves them all (conv.h), the graph-path tests never call them;
 * each returns CUDNN_STATUS_NOT_SUPPORTED (9) whatever it is passed. This
 * file does not include cudnn.h, so their parameter lists can be left out. */
#define FAKE_LEGACY(name) \
  __attribute__((visibility("default"))) int name(void) { return 9; }

FAKE_LEGACY(cudnnCreateTensorDescriptor)
FAKE_LEGACY(cudnnDestroyTensorDescriptor)
FAKE_LEGACY(cudnnSetTensorNdDescriptor)
FAKE_LEGACY(cudnnCreateFilterDescriptor)
FAKE_LEGACY(cudnnDestroyFilterDescriptor)
FAKE_LEGACY(cudnnSetFilterNdDescriptor)
FAKE_LEGACY(cudnnCreateConvolutionDescriptor)
FAKE_LEGACY(cudnnDestroyConvolutionDescriptor)
FAKE_LEGACY(cudnnSetConvolutionNdDescriptor)
FAKE_LEGACY(cudnnSetConvolutionGroupCount)
FAKE_LEGACY(cudnnSetConvolutionMathType)
FAKE_LEGACY(cudnnGetConvolutionForwardAlgorithmMaxCount)
FAKE_LEGACY(cudnnGetConvolutionForwardAlgorithm_v7)
FAKE_LEGACY(cudnnFindConvolutionForwardAlgorithmEx)
FAKE_LEGACY(cudnnGetConvolutionForwardWorkspaceSize)
FAKE_LEGACY(cudnnConvolutionForward)
FAKE_LEGACY(cudnnGetConvolutionBackwardDataAlgorithmMaxCount)
FAKE_LEGACY(cudnnGetConvolutionBackwardDataAlgorithm_v7)
FAKE_LEGACY(cudnnFindConvolutionBackwardDataAlgorithmEx)
FAKE_LEGACY(cudnnGetConvolutionBackwardDataWorkspaceSize)
FAKE_LEGACY(cudnnConvolutionBackwardData)
