//go:build !purego

#include "textflag.h"

// func prefetch(words *uint64, idx []uint64)
TEXT ·prefetch(SB), NOSPLIT, $0-32
	MOVQ words+0(FP), AX
	MOVQ idx_base+8(FP), BX
	MOVQ idx_len+16(FP), CX
	TESTQ CX, CX
	JEQ done

loop:
	MOVQ (BX), DX
	SHRQ $6, DX
	PREFETCHT0 (AX)(DX*8)
	ADDQ $8, BX
	DECQ CX
	JNE loop

done:
	RET

// func prefetchBytes(b *byte, idx []uint64)
TEXT ·prefetchBytes(SB), NOSPLIT, $0-32
	MOVQ b+0(FP), AX
	MOVQ idx_base+8(FP), BX
	MOVQ idx_len+16(FP), CX
	TESTQ CX, CX
	JEQ done

loop:
	MOVQ (BX), DX
	SHRQ $3, DX
	XORQ $7, DX
	PREFETCHT0 (AX)(DX*1)
	ADDQ $8, BX
	DECQ CX
	JNE loop

done:
	RET
