//go:build !purego

#include "textflag.h"

// func prefetch(words *uint64, idx []uint64)
TEXT ·prefetch(SB), NOSPLIT, $0-32
	MOVD words+0(FP), R0
	MOVD idx_base+8(FP), R1
	MOVD idx_len+16(FP), R2
	CBZ  R2, done

loop:
	MOVD.P 8(R1), R3
	LSR  $6, R3, R3
	ADD  R3<<3, R0, R4
	PRFM (R4), PLDL1KEEP
	SUBS $1, R2, R2
	BNE  loop

done:
	RET

// func prefetchBytes(b *byte, idx []uint64)
TEXT ·prefetchBytes(SB), NOSPLIT, $0-32
	MOVD b+0(FP), R0
	MOVD idx_base+8(FP), R1
	MOVD idx_len+16(FP), R2
	CBZ  R2, done

loop:
	MOVD.P 8(R1), R3
	LSR  $3, R3, R3
	EOR  $7, R3, R3
	ADD  R3, R0, R4
	PRFM (R4), PLDL1KEEP
	SUBS $1, R2, R2
	BNE  loop

done:
	RET
