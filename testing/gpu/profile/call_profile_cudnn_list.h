/* The cuDNN functions libcall_profile_cudnn.so wraps (call_profile.c built
 * with -DCALL_PROFILE_CUDNN): F(name) each. */
F(cudnnSetStream)
F(cudnnBackendCreateDescriptor)
F(cudnnBackendSetAttribute)
F(cudnnBackendFinalize)
F(cudnnBackendDestroyDescriptor)
F(cudnnBackendExecute)
