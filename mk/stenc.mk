# stenc make fragment: generate kernels from your own .stn files at build time.
#
#   STENC_PREFIX := /usr/local            # where stenc is installed (optional)
#   include $(STENC_PREFIX)/share/stenc/stenc.mk
#   myprog: main.o stenc-gen/heat.o
#   	$(CC) -o $@ $^ $(STENC_LIBS)
#   main.o: stenc-gen/heat.h
#   CFLAGS += $(STENC_CFLAGS)
#
# For every NAME.stn in the current folder (or on VPATH), stenc-gen writes
# $(STENC_GENDIR)/NAME.{h,c,cu,adj}; the rule below compiles NAME.c.  To
# build NAME.cu, use $(STENC_NVCC) with $(STENC_NVCCFLAGS) (see the example).
# STENC_GENFLAGS selects variants, e.g. --dims 2 --precision f64 --backend c:
# only what the program calls, several times less code to compile.

STENC_PREFIX  ?= $(patsubst %/share/stenc/stenc.mk,%,$(abspath $(lastword $(MAKEFILE_LIST))))
STENC_GEN     ?= $(STENC_PREFIX)/bin/stenc-gen
STENC_M4DIR   ?= $(STENC_PREFIX)/share/stenc/m4
STENC_GENDIR  ?= stenc-gen
STENC_GENFLAGS ?=
STENC_CFLAGS  ?= -std=c11 -O3 -fopenmp -fno-math-errno -I$(STENC_PREFIX)/include/stenc -I$(STENC_GENDIR)
STENC_LIBS    ?= -L$(STENC_PREFIX)/lib -Wl,-rpath,$(STENC_PREFIX)/lib -lstenc -fopenmp -lm
STENC_NVCC    ?= nvcc
STENC_NVCCFLAGS ?= -O3 -std=c++17 -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90 \
                   -I$(STENC_PREFIX)/include/stenc -I$(STENC_GENDIR)

$(STENC_GENDIR)/%.stamp: %.stn $(STENC_GEN)
	@mkdir -p $(STENC_GENDIR)
	$(STENC_GEN) -I $(STENC_M4DIR) $(STENC_GENFLAGS) -o $(STENC_GENDIR) $<
	@touch $@
$(STENC_GENDIR)/%.h $(STENC_GENDIR)/%.c $(STENC_GENDIR)/%.cu: $(STENC_GENDIR)/%.stamp ;
$(STENC_GENDIR)/%.o: $(STENC_GENDIR)/%.c $(STENC_GENDIR)/%.h
	$(CC) $(STENC_CFLAGS) -c -o $@ $<
$(STENC_GENDIR)/%.cu.o: $(STENC_GENDIR)/%.cu $(STENC_GENDIR)/%.h
	$(STENC_NVCC) $(STENC_NVCCFLAGS) -c -o $@ $<
.SECONDARY:
