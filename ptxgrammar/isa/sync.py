"""Synchronization and warp-level operations (PTX ISA 9.7.12-13): mbarrier, fence, membar,
bar, barrier, elect, setmaxnreg, griddepcontrol, nanosleep, redux, shfl, vote, match,
activemask, clusterlaunchcontrol; control flow (9.7.12: bra, call, ret, exit, trap)."""

from .common import SCOPE

_MB_SPACE = ".shared .shared::cta .shared::cluster"
_MB = dict(since="7.0", sm=80)
_MB90 = dict(since="8.0", sm=90)
# mbarrier with no state space written reads a generic address (a 64-bit register under .address_size 64)
_GENERIC = dict(generic=True)

# bar/barrier: `.sync`/`.arrive` take a barrier id 0-15 and a thread count; `.red` a result, the
# id, an optional count and a predicate
_BARRIER_WHEN = [
    dict(has=".sync", lacks=".red .arrive", args="s:u32 s:u32?", ranges={0: (0, 15, 1), 1: (0, 1024, 32)}),
    dict(has=".arrive", args="s:u32 s:u32", ranges={0: (0, 15, 1), 1: (0, 1024, 32)},
         msg="arrive takes the barrier and a count"),
    dict(has=".red", operands=(3, 4)), dict(has=".red", need="op"), dict(has=".red", need="type"),
    dict(has=".red", args="d:T s:u32 x x?", msg="bar.red writes its result first, then the barrier id"),
]

FORMS = [
    dict(op="mbarrier", select=(".init",), groups={"space": ".shared .shared::cta", "type": ".b64"},
         required=("type",), args="a s:u32", features={".shared::cta": dict(since="7.8")}, **_MB, **_GENERIC),
    dict(op="mbarrier", select=(".inval",), groups={"space": ".shared .shared::cta", "type": ".b64"},
         required=("type",), args="a", features={".shared::cta": dict(since="7.8")}, **_MB, **_GENERIC),
    *[dict(op="mbarrier", select=(verb,),
           groups={"tx": ".expect_tx .noComplete", "sem": ".release .relaxed", "scope": ".cta .cluster",
                   "space": _MB_SPACE, "type": ".b64"},
           required=("type",), args="d:b64 a s:u32?",
           features={".expect_tx": _MB90, ".shared::cluster": _MB90, ".cluster": _MB90,
                     ".shared::cta": dict(since="7.8"),
                     ".release": dict(since="8.0"), ".relaxed": dict(since="8.0")}, **_MB, **_GENERIC)
      for verb in (".arrive", ".arrive_drop")],
    *[dict(op="mbarrier", select=(verb,),
           groups={"sem": ".relaxed", "scope": ".cta .cluster", "space": _MB_SPACE, "type": ".b64"},
           required=("type",), args="a s:u32", **_MB90, **_GENERIC)
      for verb in (".expect_tx", ".complete_tx")],
    *[dict(op="mbarrier", select=(verb,),
           groups={"parity": ".parity", "sem": ".acquire .relaxed", "scope": ".cta .cluster",
                   "space": ".shared .shared::cta", "type": ".b64"},
           required=("type",), args="pp a s s:b32?",
           features={".cluster": _MB90, ".acquire": dict(since="8.0"), ".relaxed": dict(since="8.0")},
           **(_MB90 if verb == ".try_wait" else dict(since="7.0", sm=80)), **_GENERIC)
      for verb in (".test_wait", ".try_wait")],
    dict(op="mbarrier", select=(".pending_count",), groups={"type": ".b64"}, required=("type",),
         args="d:b32 s:b64", **_MB),
    dict(op="fence",
         groups={"sem": ".sc .acq_rel .acquire .release", "scope": SCOPE, "proxy": ".proxy .mbarrier_init .op_restrict",
                 "kind": ".alias .async .tensormap::generic .async::generic",
                 "state": ".global .shared::cta .shared::cluster .sync_restrict::shared::cluster"
                          " .sync_restrict::shared::cta"},
         operands=(0, 2), since="6.0", sm=70,
         when=[dict(has=".sc .acq_rel .acquire .release", need="scope", msg="an ordering fence names its scope"),
               dict(lacks=".proxy", forbid=".global .shared::cta .shared::cluster",
                    msg="only fence.proxy names a state space")],
         features={".cluster": dict(since="7.8", sm=90), ".async": dict(since="8.0", sm=90),
                   ".mbarrier_init": dict(since="8.0", sm=90), ".tensormap::generic": dict(since="8.3", sm=90),
                   ".proxy": dict(since="7.5", sm=70), ".acquire": dict(sm=90), ".release": dict(sm=90)}),
    dict(op="membar", groups={"scope": ".cta .gl .sys", "proxy": ".proxy", "kind": ".alias"}, operands=0,
         when=[dict(lacks=".proxy", need="scope", msg="membar names its level")]),
    dict(op="bar", groups={"cta": ".cta", "kind": ".sync .arrive .red", "aligned": ".aligned",
                           "op": ".popc .and .or", "type": ".u32 .pred"},
         required=("kind",), operands=(1, 4), when=_BARRIER_WHEN),
    dict(op="bar", select=(".warp",), groups={"sync": ".sync"}, required=("sync",), args="s:b32",
         since="6.0", sm=30),
    dict(op="barrier", groups={"cta": ".cta", "kind": ".sync .arrive .red", "aligned": ".aligned",
                               "op": ".popc .and .or", "type": ".u32 .pred"},
         required=("kind",), operands=(1, 4), since="6.0", when=_BARRIER_WHEN),
    dict(op="barrier", select=(".cluster",), groups={"kind": ".arrive .wait", "sem": ".release .relaxed .acquire",
                                                    "aligned": ".aligned"},
         required=("kind",), operands=0, since="7.8", sm=90,
         when=[dict(has=".arrive", forbid=".acquire", msg="arrive releases"),
               dict(has=".wait", forbid=".release .relaxed", msg="wait acquires")]),
    dict(op="elect", groups={"sync": ".sync"}, required=("sync",), args="dp:b32 s:u32", since="8.0", sm=90),
    dict(op="setmaxnreg", groups={"dir": ".inc .dec", "sync": ".sync", "aligned": ".aligned", "type": ".u32"},
         required=("dir", "sync", "aligned", "type"), args="i", ranges={0: (24, 256, 8)}, since="8.0", sm=90,
         arch="a"),
    dict(op="griddepcontrol", groups={"kind": ".launch_dependents .wait"}, required=("kind",), operands=0,
         since="7.8", sm=90),
    dict(op="nanosleep", groups={"type": ".u32"}, required=("type",), args="s:u32", since="6.3", sm=70),
    dict(op="redux", groups={"sync": ".sync", "op": ".add .min .max .and .or .xor", "abs": ".abs", "nan": ".NaN",
                             "type": ".u32 .s32 .b32 .f32"},
         required=("sync", "op", "type"), args="d:T s:T s:u32", since="7.0", sm=80,
         features={".f32": dict(since="8.6", sm=100, arch="a"), ".abs": dict(since="8.6", sm=100, arch="a"),
                   ".NaN": dict(since="8.6", sm=100, arch="a")}),
    dict(op="shfl", groups={"sync": ".sync", "mode": ".up .down .bfly .idx", "type": ".b32"},
         required=("mode", "type"), operands=(4, 5), features={".sync": dict(since="6.0", sm=30)},
         when=[dict(has=".sync", args="dp:b32 s:b32 s:b32 s:b32 s:u32", msg="shfl.sync takes a member mask last"),
               dict(lacks=".sync", args="dp:b32 s:b32 s:b32 s:b32")]),
    dict(op="vote", groups={"sync": ".sync", "mode": ".all .any .uni .ballot", "type": ".pred .b32"},
         required=("mode", "type"), operands=(2, 3), features={".sync": dict(since="6.0", sm=30)},
         when=[dict(has=".sync", args="p p s:u32", msg="vote.sync takes a member mask last"),
               dict(lacks=".sync", args="p p"),
               dict(has=".any .all .uni", only=".pred", msg=".any/.all/.uni vote into a predicate"),
               dict(has=".ballot", only=".b32", msg=".ballot writes a .b32 mask"),
               dict(has=".sync", types=".b32", args="d:b32 p s:u32", msg="ballot writes a .b32 mask"),
               dict(lacks=".sync", types=".b32", args="d:b32 p")]),
    dict(op="match", groups={"mode": ".any .all", "sync": ".sync", "type": ".b32 .b64"},
         required=("mode", "sync", "type"), args="dp:b32 s:T s:u32", since="6.0", sm=70),
    dict(op="activemask", groups={"type": ".b32"}, required=("type",), args="d:b32", since="6.2", sm=30),
    dict(op="clusterlaunchcontrol", select=(".try_cancel",),
         groups={"async": ".async", "space": ".shared::cta", "mbar": ".mbarrier::complete_tx::bytes",
                 "multicast": ".multicast::cluster::all", "type": ".b128"},
         required=("type",), operands=2, addr=(0, 1), since="8.6", sm=100),
    dict(op="clusterlaunchcontrol", select=(".query_cancel",),
         groups={"what": ".is_canceled .get_first_ctaid .get_first_ctaid::x .get_first_ctaid::y"
                         " .get_first_ctaid::z", "vec": ".v4", "type": ".pred .b32 .b128"},
         max={"type": 2}, required=("what", "type"), operands=2, since="8.6", sm=100),
    dict(op="bra", groups={"uni": ".uni"}, args="l"),
    dict(op="brx", select=(".idx",), groups={"uni": ".uni"}, args="s:u32 l", since="6.0", sm=30),
    dict(op="ret", groups={"uni": ".uni"}, operands=0),
    dict(op="exit", operands=0),
    dict(op="trap", operands=0),
    dict(op="brkpt", operands=0, since="1.0", sm=11),
    dict(op="pmevent", groups={"mask": ".mask"}, args="i", ranges={0: (0, 15, 1)},
         when=[dict(has=".mask", ranges={0: (0, 0xFFFF, 1)}, since="3.0")]),
    # call: `call{.uni} (rets), f, (args) {, proto|targets}` - the pieces are checked by ptxas'
    # ABI rules, not here; only the count
    dict(op="call", groups={"uni": ".uni"}, operands=(1, 4)),
]
