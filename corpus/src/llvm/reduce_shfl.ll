; Block reduction: shared memory (addrspace 3), barrier, warp shuffles, float atomic add.
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

@partials = internal addrspace(3) global [32 x float] undef, align 4

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
declare void @llvm.nvvm.barrier0()
declare float @llvm.nvvm.shfl.sync.down.f32(i32, float, i32, i32)

define internal float @warp_sum(float %v0) alwaysinline {
entry:
  %s16 = call float @llvm.nvvm.shfl.sync.down.f32(i32 -1, float %v0, i32 16, i32 31)
  %v1 = fadd float %v0, %s16
  %s8 = call float @llvm.nvvm.shfl.sync.down.f32(i32 -1, float %v1, i32 8, i32 31)
  %v2 = fadd float %v1, %s8
  %s4 = call float @llvm.nvvm.shfl.sync.down.f32(i32 -1, float %v2, i32 4, i32 31)
  %v3 = fadd float %v2, %s4
  %s2 = call float @llvm.nvvm.shfl.sync.down.f32(i32 -1, float %v3, i32 2, i32 31)
  %v4 = fadd float %v3, %s2
  %s1 = call float @llvm.nvvm.shfl.sync.down.f32(i32 -1, float %v4, i32 1, i32 31)
  %v5 = fadd float %v4, %s1
  ret float %v5
}

define void @block_reduce_sum(float addrspace(1)* %x, float addrspace(1)* %out, i32 %n) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %ctaid = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %ntid = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %b = mul i32 %ctaid, %ntid
  %i = add i32 %b, %tid
  %inb = icmp slt i32 %i, %n
  br i1 %inb, label %ld, label %red
ld:
  %idx = sext i32 %i to i64
  %p = getelementptr inbounds float, float addrspace(1)* %x, i64 %idx
  %xv = load float, float addrspace(1)* %p, align 4
  br label %red
red:
  %v = phi float [ %xv, %ld ], [ 0.0, %entry ]
  %w = call float @warp_sum(float %v)
  %lane = and i32 %tid, 31
  %warp = lshr i32 %tid, 5
  %is0 = icmp eq i32 %lane, 0
  br i1 %is0, label %st, label %sync
st:
  %wi = zext i32 %warp to i64
  %sp = getelementptr inbounds [32 x float], [32 x float] addrspace(3)* @partials, i64 0, i64 %wi
  store float %w, float addrspace(3)* %sp, align 4
  br label %sync
sync:
  call void @llvm.nvvm.barrier0()
  %first = icmp eq i32 %warp, 0
  br i1 %first, label %final, label %exit
final:
  %nw = lshr i32 %ntid, 5
  %has = icmp ult i32 %lane, %nw
  %li = zext i32 %lane to i64
  %lp = getelementptr inbounds [32 x float], [32 x float] addrspace(3)* @partials, i64 0, i64 %li
  %lv = load float, float addrspace(3)* %lp, align 4
  %pv = select i1 %has, float %lv, float 0.0
  %tot = call float @warp_sum(float %pv)
  br i1 %is0, label %atom, label %exit
atom:
  %old = atomicrmw fadd float addrspace(1)* %out, float %tot monotonic
  br label %exit
exit:
  ret void
}

!nvvm.annotations = !{!0}
!0 = !{void (float addrspace(1)*, float addrspace(1)*, i32)* @block_reduce_sum, !"kernel", i32 1}
