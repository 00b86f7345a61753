; Vector loads/stores, half precision, integer bit intrinsics, NVVM math intrinsics, cmpxchg.
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare float @llvm.nvvm.rsqrt.approx.f(float)
declare float @llvm.nvvm.ex2.approx.f(float)
declare float @llvm.sqrt.f32(float)
declare float @llvm.fabs.f32(float)
declare float @llvm.minnum.f32(float, float)
declare float @llvm.maxnum.f32(float, float)
declare i32 @llvm.ctpop.i32(i32)
declare i32 @llvm.ctlz.i32(i32, i1)
declare i32 @llvm.bitreverse.i32(i32)
declare i32 @llvm.fshl.i32(i32, i32, i32)

define void @vec4_norm(<4 x float> addrspace(1)* %in, <4 x float> addrspace(1)* %out) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %ctaid = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %s = shl i32 %ctaid, 8
  %i = add i32 %s, %tid
  %idx = zext i32 %i to i64
  %p = getelementptr inbounds <4 x float>, <4 x float> addrspace(1)* %in, i64 %idx
  %v = load <4 x float>, <4 x float> addrspace(1)* %p, align 16
  %sq = fmul <4 x float> %v, %v
  %e0 = extractelement <4 x float> %sq, i32 0
  %e1 = extractelement <4 x float> %sq, i32 1
  %e2 = extractelement <4 x float> %sq, i32 2
  %e3 = extractelement <4 x float> %sq, i32 3
  %a01 = fadd float %e0, %e1
  %a23 = fadd float %e2, %e3
  %ss = fadd float %a01, %a23
  %r = call float @llvm.nvvm.rsqrt.approx.f(float %ss)
  %ins = insertelement <4 x float> undef, float %r, i32 0
  %spl = shufflevector <4 x float> %ins, <4 x float> undef, <4 x i32> zeroinitializer
  %nv = fmul <4 x float> %v, %spl
  %q = getelementptr inbounds <4 x float>, <4 x float> addrspace(1)* %out, i64 %idx
  store <4 x float> %nv, <4 x float> addrspace(1)* %q, align 16
  ret void
}

define void @half_axpy(half addrspace(1)* %x, half addrspace(1)* %y, half %a) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %idx = zext i32 %tid to i64
  %px = getelementptr inbounds half, half addrspace(1)* %x, i64 %idx
  %py = getelementptr inbounds half, half addrspace(1)* %y, i64 %idx
  %vx = load half, half addrspace(1)* %px
  %vy = load half, half addrspace(1)* %py
  %m = fmul half %a, %vx
  %r = fadd half %m, %vy
  store half %r, half addrspace(1)* %py
  ret void
}

define void @float_misc(float addrspace(1)* %x) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %idx = zext i32 %tid to i64
  %p = getelementptr inbounds float, float addrspace(1)* %x, i64 %idx
  %v = load float, float addrspace(1)* %p
  %ab = call float @llvm.fabs.f32(float %v)
  %sq = call float @llvm.sqrt.f32(float %ab)
  %e = call float @llvm.nvvm.ex2.approx.f(float %v)
  %mn = call float @llvm.minnum.f32(float %sq, float %e)
  %mx = call float @llvm.maxnum.f32(float %mn, float 0.5)
  %d = fdiv float %mx, %v
  store float %d, float addrspace(1)* %p
  ret void
}

define void @bits(i32 addrspace(1)* %x, i32 addrspace(1)* %lock) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %idx = zext i32 %tid to i64
  %p = getelementptr inbounds i32, i32 addrspace(1)* %x, i64 %idx
  %v = load i32, i32 addrspace(1)* %p
  %pc = call i32 @llvm.ctpop.i32(i32 %v)
  %lz = call i32 @llvm.ctlz.i32(i32 %v, i1 false)
  %br = call i32 @llvm.bitreverse.i32(i32 %v)
  %fs = call i32 @llvm.fshl.i32(i32 %v, i32 %br, i32 7)
  %s1 = add i32 %pc, %lz
  %s2 = xor i32 %s1, %fs
  %dv = udiv i32 %s2, 7
  %rm = srem i32 %v, 13
  %s3 = add i32 %dv, %rm
  store i32 %s3, i32 addrspace(1)* %p
  %cx = cmpxchg i32 addrspace(1)* %lock, i32 0, i32 %tid seq_cst seq_cst
  %ok = extractvalue { i32, i1 } %cx, 1
  %xv = atomicrmw xchg i32 addrspace(1)* %lock, i32 0 acq_rel
  %mx = atomicrmw max i32 addrspace(1)* %lock, i32 %s3 monotonic
  ret void
}

!nvvm.annotations = !{!0, !1, !2, !3}
!0 = !{void (<4 x float> addrspace(1)*, <4 x float> addrspace(1)*)* @vec4_norm, !"kernel", i32 1}
!1 = !{void (half addrspace(1)*, half addrspace(1)*, half)* @half_axpy, !"kernel", i32 1}
!2 = !{void (float addrspace(1)*)* @float_misc, !"kernel", i32 1}
!3 = !{void (i32 addrspace(1)*, i32 addrspace(1)*)* @bits, !"kernel", i32 1}
