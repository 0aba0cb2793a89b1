# Kernel targets for the top-level Makefile; replaced when kernels/ lands.
kernel-test:
	@echo "kernel-test: kernels/ has no sources yet"
