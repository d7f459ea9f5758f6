// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: bd0, ebd0
// @depends: log1pmx, rmath_utils
// @source: C. Loader (2000), "Fast and accurate computation of binomial probabilities" (bd0 and
//          its series); M. Welinder (2014), R bug report PR#15628, "dpois/dbinom accuracy"
//          (ebd0: the deviance term as an unevaluated sum, with a table of log(f/1024)).
//
// bd0(x, np) = x log(x / np) + np - x, the deviance term of Loader's saddle point expansion,
// computed without cancellation: for |x - np| < 0.1 (x + np) by the series
//   bd0 = (x - np) v + 2x sum_{j>=1} v^(2j+1) / (2j + 1),   v = (x - np) / (x + np);
// otherwise directly.  NaN for non-finite arguments or np = 0.
//
// ebd0(x, M, &yh, &yl) gives the same quantity as yh + yl with yh an integer and yl small, so
// that exp(-yh) exp(-yl) keeps full relative accuracy for huge x.  With M/x = r 2^e
// (r in [1/2, 1)), a nearby f / (2^e 1024) = fg ~ x/M is taken from a grid of 129 values, and
//   x log(x/M) + M - x = -x log1pmx((M fg - x)/x) + x log(f/1024) - x e log 2 + M - M fg,
// each log(f/1024) being stored as four floats whose sum is exact to ~100 bits (table below:
// generated with mpmath, each float the nearest to what remains of the logarithm).

// bd0_scale[i] = log(f_i / 1024),  f_i = round(1024 / (1/2 + i/256)),  i = 0 .. 128
__constant float ebd0_scale[129][4] = {
    { +0x1.62e43p-1f, -0x1.05c61p-29f, -0x1.950d88p-54f, +0x1.d9cc02p-79f },   // 2048/1024
    { +0x1.5ee02ap-1f, +0x1.2482cep-26f, +0x1.5c3582p-51f, +0x1.5fd242p-77f },   // 2032/1024
    { +0x1.5ad404p-1f, +0x1.86b3e6p-26f, -0x1.826b2ap-52f, -0x1.5a0fdcp-77f },   // 2016/1024
    { +0x1.570122p-1f, +0x1.84a2bep-27f, +0x1.904608p-56f, +0x1.0b7708p-81f },   // 2001/1024
    { +0x1.5326e2p-1f, +0x1.919e2cp-27f, -0x1.bc0c9ap-52f, -0x1.480a7p-77f },   // 1986/1024
    { +0x1.4f4528p-1f, +0x1.aca70cp-28f, +0x1.103e74p-53f, +0x1.9c410ap-81f },   // 1971/1024
    { +0x1.4b5bd6p-1f, +0x1.2adc4ep-26f, +0x1.c6f0cp-52f, -0x1.afba9ep-77f },   // 1956/1024
    { +0x1.47ae52p-1f, +0x1.512b92p-27f, -0x1.cc90cep-52f, -0x1.743ec8p-77f },   // 1942/1024
    { +0x1.43f9fep-1f, +0x1.7ce734p-28f, -0x1.0b1b08p-54f, -0x1.927c48p-79f },   // 1928/1024
    { +0x1.3ffa42p-1f, -0x1.cb7b08p-26f, +0x1.15163ep-53f, +0x1.6153f2p-78f },   // 1913/1024
    { +0x1.3c7c8p-1f, -0x1.19bf46p-34f, -0x1.f406dcp-59f, +0x1.fb4826p-85f },   // 1900/1024
    { +0x1.38b322p-1f, -0x1.29510ep-26f, -0x1.071cc4p-52f, -0x1.d7a586p-80f },   // 1886/1024
    { +0x1.34e28ap-1f, -0x1.318f16p-28f, -0x1.d228dap-54f, -0x1.3bd18ep-80f },   // 1872/1024
    { +0x1.315124p-1f, +0x1.c2fc5ep-29f, +0x1.78d20ap-54f, -0x1.4c322ap-80f },   // 1859/1024
    { +0x1.2db956p-1f, -0x1.1be43cp-26f, +0x1.6327dep-52f, +0x1.ddd15cp-81f },   // 1846/1024
    { +0x1.2a1b06p-1f, +0x1.53b6dcp-26f, -0x1.61e70ap-51f, +0x1.77593p-79f },   // 1833/1024
    { +0x1.26762p-1f, +0x1.3430ep-29f, -0x1.96a958p-56f, +0x1.f8e636p-82f },   // 1820/1024
    { +0x1.23130ep-1f, -0x1.082818p-26f, +0x1.416f1cp-52f, -0x1.78dd36p-77f },   // 1808/1024
    { +0x1.1faa34p-1f, +0x1.70e12ap-26f, -0x1.f9fa12p-52f, +0x1.ef4328p-79f },   // 1796/1024
    { +0x1.1bf204p-1f, +0x1.3a9622p-28f, -0x1.a0d67cp-53f, -0x1.bda502p-78f },   // 1783/1024
    { +0x1.187ce4p-1f, -0x1.07786ep-27f, -0x1.354bp-52f, +0x1.eaafd6p-78f },   // 1771/1024
    { +0x1.1501bep-1f, +0x1.7f26a4p-26f, +0x1.8dd716p-53f, -0x1.13ffeap-80f },   // 1759/1024
    { +0x1.11cb82p-1f, -0x1.0f066p-26f, -0x1.efdc78p-51f, -0x1.5380cep-77f },   // 1748/1024
    { +0x1.0e4498p-1f, +0x1.747322p-27f, +0x1.fb7572p-52f, +0x1.de9696p-77f },   // 1736/1024
    { +0x1.0b036ep-1f, -0x1.2de716p-26f, -0x1.45e678p-51f, -0x1.c0e23cp-76f },   // 1725/1024
    { +0x1.07707p-1f, -0x1.a769bcp-27f, +0x1.452236p-52f, -0x1.28b33p-77f },   // 1713/1024
    { +0x1.04240cp-1f, -0x1.a686acp-27f, -0x1.ef46b2p-52f, +0x1.463de8p-77f },   // 1702/1024
    { +0x1.00d22ep-1f, -0x1.f8f7a4p-32f, -0x1.1fcd1ap-58f, +0x1.74ceep-84f },   // 1691/1024
    { +0x1.faf588p-2f, +0x1.ef1e64p-27f, -0x1.26504cp-54f, -0x1.b15794p-82f },   // 1680/1024
    { +0x1.f4d87ep-2f, -0x1.42340ep-29f, +0x1.eeb28cp-54f, +0x1.758c66p-79f },   // 1670/1024
    { +0x1.ee1416p-2f, -0x1.a27f4p-27f, +0x1.dc00fep-52f, -0x1.df312ap-82f },   // 1659/1024
    { +0x1.e7e32cp-2f, -0x1.ac796cp-27f, -0x1.a68816p-54f, -0x1.b945fap-79f },   // 1649/1024
    { +0x1.e108ap-2f, -0x1.768ba6p-28f, +0x1.f5ebp-57f, +0x1.00d632p-82f },   // 1638/1024
    { +0x1.dac354p-2f, -0x1.d3a6acp-30f, +0x1.18734cp-57f, -0x1.f97902p-83f },   // 1628/1024
    { +0x1.d47424p-2f, +0x1.7dbbacp-31f, -0x1.d5ada4p-56f, +0x1.56fcaap-81f },   // 1618/1024
    { +0x1.ce1afp-2f, +0x1.70be7ep-27f, -0x1.2120b6p-52f, +0x1.e55684p-77f },   // 1608/1024
    { +0x1.c7b79ap-2f, -0x1.3c915p-30f, -0x1.f8a53ap-56f, +0x1.79f0ccp-81f },   // 1598/1024
    { +0x1.c1ef06p-2f, -0x1.f10154p-29f, +0x1.11dd6p-55f, +0x1.4a3ce2p-82f },   // 1589/1024
    { +0x1.bb7812p-2f, -0x1.70e806p-27f, +0x1.22dc7p-53f, -0x1.562aeep-78f },   // 1579/1024
    { +0x1.b59dap-2f, -0x1.882b08p-27f, +0x1.31573ap-53f, +0x1.cf6d9ap-79f },   // 1570/1024
    { +0x1.af1294p-2f, -0x1.b710f2p-27f, -0x1.3bb31ep-52f, -0x1.daf512p-77f },   // 1560/1024
    { +0x1.a925d4p-2f, -0x1.0ae74ep-27f, -0x1.516256p-52f, +0x1.0932ep-80f },   // 1551/1024
    { +0x1.a3304p-2f, +0x1.027d32p-29f, -0x1.196ac4p-55f, +0x1.3471dcp-80f },   // 1542/1024
    { +0x1.9d31bep-2f, +0x1.427da8p-27f, -0x1.5245ep-52f, +0x1.2522dp-79f },   // 1533/1024
    { +0x1.972a34p-2f, +0x1.135158p-30f, +0x1.a5c09ep-56f, -0x1.b691e4p-81f },   // 1524/1024
    { +0x1.911986p-2f, -0x1.ecd456p-27f, +0x1.dfdae4p-53f, +0x1.64eea8p-78f },   // 1515/1024
    { +0x1.8bad98p-2f, -0x1.1d6142p-29f, -0x1.48dbeep-54f, +0x1.ec158ap-81f },   // 1507/1024
    { +0x1.858b58p-2f, -0x1.1b4678p-27f, +0x1.56cab4p-53f, -0x1.2fdc0cp-78f },   // 1498/1024
    { +0x1.7f5fap-2f, +0x1.3aaf4ap-27f, -0x1.73cd36p-52f, +0x1.2b91dap-77f },   // 1489/1024
    { +0x1.79db66p-2f, +0x1.035f5ap-27f, -0x1.319162p-52f, +0x1.7b8216p-78f },   // 1481/1024
    { +0x1.744f86p-2f, +0x1.9f8f38p-29f, -0x1.e9d182p-54f, +0x1.27f288p-79f },   // 1473/1024
    { +0x1.6e08eap-2f, +0x1.45743cp-27f, +0x1.c609cap-53f, -0x1.ce51dp-79f },   // 1464/1024
    { +0x1.686c82p-2f, -0x1.64eb52p-30f, +0x1.88857cp-55f, +0x1.014e38p-82f },   // 1456/1024
    { +0x1.62c83p-2f, -0x1.a8c70ep-27f, +0x1.4bdbd8p-52f, -0x1.bab3fcp-79f },   // 1448/1024
    { +0x1.5d1bdcp-2f, -0x1.4fec6cp-31f, +0x1.423638p-56f, +0x1.ee3ffp-83f },   // 1440/1024
    { +0x1.576772p-2f, -0x1.1754b2p-27f, -0x1.d5b2a4p-53f, -0x1.35f268p-78f },   // 1432/1024
    { +0x1.5262dep-2f, +0x1.d7311p-27f, -0x1.b9f708p-52f, -0x1.294018p-77f },   // 1425/1024
    { +0x1.4c9f0ap-2f, -0x1.ead3c4p-30f, +0x1.10c79p-56f, -0x1.6efc76p-84f },   // 1417/1024
    { +0x1.46d2dap-2f, -0x1.ebfd4cp-29f, -0x1.362826p-54f, -0x1.14bd36p-85f },   // 1409/1024
    { +0x1.41b942p-2f, -0x1.98fa08p-29f, -0x1.a404fap-54f, +0x1.e01bb8p-79f },   // 1402/1024
    { +0x1.3bdd24p-2f, +0x1.d6296ep-27f, -0x1.7b497p-52f, -0x1.cddb2cp-77f },   // 1394/1024
    { +0x1.36b578p-2f, -0x1.287ddep-27f, +0x1.a5e16ap-52f, +0x1.c223f2p-78f },   // 1387/1024
    { +0x1.31871cp-2f, +0x1.2a883p-27f, +0x1.3eae54p-52f, -0x1.898136p-77f },   // 1380/1024
    { +0x1.2b9304p-2f, -0x1.51d8b6p-28f, -0x1.b12d6cp-53f, +0x1.3d6a96p-83f },   // 1372/1024
    { +0x1.26562p-2f, -0x1.d98f3ap-27f, -0x1.6ef32p-53f, -0x1.56e85ep-78f },   // 1365/1024
    { +0x1.211256p-2f, -0x1.9e7a7ep-28f, +0x1.cf1746p-53f, -0x1.abcf14p-78f },   // 1358/1024
    { +0x1.1bc794p-2f, +0x1.fa391ap-27f, -0x1.e18e9p-53f, +0x1.16107cp-78f },   // 1351/1024
    { +0x1.1675cap-2f, +0x1.7574c2p-27f, -0x1.fc6338p-54f, -0x1.5477c8p-81f },   // 1344/1024
    { +0x1.111ce4p-2f, +0x1.f7266ep-37f, +0x1.1ed296p-63f, +0x1.2526b2p-88f },   // 1337/1024
    { +0x1.0c81d4p-2f, +0x1.0c150ep-27f, -0x1.bcf402p-52f, +0x1.746768p-79f },   // 1331/1024
    { +0x1.071b86p-2f, -0x1.953798p-33f, +0x1.d1708p-58f, -0x1.a1086p-84f },   // 1324/1024
    { +0x1.01ade4p-2f, -0x1.bb1842p-28f, -0x1.26199cp-55f, +0x1.f56fb6p-81f },   // 1317/1024
    { +0x1.fa01c4p-3f, -0x1.12a0dp-29f, -0x1.f71faep-54f, -0x1.d785c2p-82f },   // 1311/1024
    { +0x1.ef0adcp-3f, +0x1.7b8b26p-28f, +0x1.948638p-53f, -0x1.abc8f8p-79f },   // 1304/1024
    { +0x1.e598eep-3f, -0x1.4af03ap-28f, -0x1.34bcf2p-55f, +0x1.675f34p-83f },   // 1298/1024
    { +0x1.da85d6p-3f, +0x1.06728p-30f, +0x1.94c16cp-57f, +0x1.8fd7eap-82f },   // 1291/1024
    { +0x1.d0fb8p-3f, -0x1.bb5436p-28f, +0x1.5a9bf4p-56f, -0x1.9d9498p-82f },   // 1285/1024
    { +0x1.c765bap-3f, -0x1.b2972ap-31f, -0x1.2992d2p-57f, +0x1.bdb0fep-82f },   // 1279/1024
    { +0x1.bdc46ap-3f, +0x1.c68962p-28f, +0x1.6d009p-54f, -0x1.4d7d4cp-79f },   // 1273/1024
    { +0x1.b2797ep-3f, +0x1.c8c642p-28f, -0x1.11520ep-53f, +0x1.7fab8cp-79f },   // 1266/1024
    { +0x1.a8bedp-3f, -0x1.bbe874p-30f, +0x1.85cf22p-56f, -0x1.18c39ep-82f },   // 1260/1024
    { +0x1.9ef83ep-3f, -0x1.b12cbap-28f, +0x1.e9098p-54f, +0x1.8c8018p-79f },   // 1254/1024
    { +0x1.9525aap-3f, -0x1.85d4a6p-30f, +0x1.d904c2p-57f, -0x1.58e8eep-84f },   // 1248/1024
    { +0x1.8b46f8p-3f, +0x1.11b12ep-30f, -0x1.837bf4p-56f, -0x1.141b68p-81f },   // 1242/1024
    { +0x1.83040cp-3f, +0x1.2379e6p-28f, -0x1.238e46p-54f, -0x1.90cde6p-80f },   // 1237/1024
    { +0x1.790ed4p-3f, +0x1.dc4c66p-28f, +0x1.bbd4e8p-54f, -0x1.17215p-79f },   // 1231/1024
    { +0x1.6f0d28p-3f, +0x1.5cad6ap-28f, -0x1.1906dap-53f, +0x1.b9ed1ap-79f },   // 1225/1024
    { +0x1.64fee8p-3f, +0x1.04bf8ap-28f, -0x1.206bacp-53f, -0x1.dded5ep-78f },   // 1219/1024
    { +0x1.5c94p-3f, +0x1.d65caep-29f, +0x1.35b996p-55f, +0x1.ccde74p-80f },   // 1214/1024
    { +0x1.526e5ep-3f, +0x1.d0da1cp-30f, -0x1.746ff8p-57f, -0x1.48e1a8p-82f },   // 1208/1024
    { +0x1.483bccp-3f, +0x1.9cdc7cp-28f, -0x1.5ad8dcp-54f, -0x1.392d38p-83f },   // 1202/1024
    { +0x1.3fb25ap-3f, +0x1.654a32p-29f, +0x1.6f9acep-54f, -0x1.380452p-79f },   // 1197/1024
    { +0x1.371fc2p-3f, +0x1.e8f744p-35f, -0x1.0c9a4ep-61f, -0x1.50e76p-86f },   // 1192/1024
    { +0x1.2cca1p-3f, -0x1.4141b6p-28f, +0x1.0e6e5p-56f, +0x1.dc0feap-85f },   // 1186/1024
    { +0x1.242312p-3f, -0x1.88b5e4p-28f, +0x1.7fe1c4p-54f, +0x1.62640ep-80f },   // 1181/1024
    { +0x1.1b72aep-3f, -0x1.5a130cp-28f, +0x1.483024p-58f, -0x1.71a652p-83f },   // 1176/1024
    { +0x1.10f8e4p-3f, +0x1.129cd8p-30f, +0x1.31ef32p-55f, -0x1.630724p-81f },   // 1170/1024
    { +0x1.08338ap-3f, +0x1.ff4506p-28f, -0x1.986a7p-53f, +0x1.1f138ap-79f },   // 1165/1024
    { +0x1.fec914p-4f, -0x1.c482a8p-29f, -0x1.55746cp-54f, +0x1.99f932p-80f },   // 1160/1024
    { +0x1.ed1794p-4f, +0x1.d06f02p-29f, -0x1.14374ap-54f, +0x1.7dbe12p-81f },   // 1155/1024
    { +0x1.db527p-4f, +0x1.87d928p-32f, -0x1.0f52a4p-57f, +0x1.81f4acp-84f },   // 1150/1024
    { +0x1.c97978p-4f, +0x1.af1d24p-29f, -0x1.0977d2p-60f, +0x1.df18d6p-86f },   // 1145/1024
    { +0x1.b78c82p-4f, +0x1.761db4p-29f, +0x1.0843c6p-56f, +0x1.e064fcp-82f },   // 1140/1024
    { +0x1.a58b6p-4f, +0x1.856464p-29f, +0x1.c651d2p-55f, -0x1.3e53ccp-81f },   // 1135/1024
    { +0x1.9375e6p-4f, -0x1.54d424p-29f, -0x1.1e464p-55f, +0x1.86c89cp-81f },   // 1130/1024
    { +0x1.814be2p-4f, +0x1.fc601cp-31f, -0x1.b8fc4ap-56f, -0x1.f4080ep-81f },   // 1125/1024
    { +0x1.6f0d28p-4f, +0x1.5cad6ap-29f, -0x1.1906dap-54f, +0x1.b9ed1ap-80f },   // 1120/1024
    { +0x1.60658ap-4f, +0x1.26ea18p-29f, +0x1.d8ef74p-55f, +0x1.c4f792p-80f },   // 1116/1024
    { +0x1.4e011p-4f, +0x1.146b5cp-29f, +0x1.73f7ccp-54f, -0x1.d28db8p-79f },   // 1111/1024
    { +0x1.3b875ap-4f, -0x1.d39244p-30f, -0x1.05652cp-55f, +0x1.ae76b4p-80f },   // 1106/1024
    { +0x1.28f834p-4f, +0x1.43b6a4p-30f, -0x1.452af8p-55f, +0x1.976892p-80f },   // 1101/1024
    { +0x1.1a0fbap-4f, +0x1.bf8a52p-32f, -0x1.9e7314p-64f, -0x1.23e43ap-89f },   // 1097/1024
    { +0x1.075984p-4f, -0x1.4ce372p-29f, +0x1.301b4ap-56f, +0x1.99e22ep-82f },   // 1092/1024
    { +0x1.f0a30cp-5f, +0x1.162a66p-37f, +0x1.7cc972p-65f, -0x1.22299ap-90f },   // 1088/1024
    { +0x1.cae73p-5f, -0x1.1a8f7ep-31f, +0x1.40dfdap-56f, +0x1.390608p-82f },   // 1083/1024
    { +0x1.ac9722p-5f, +0x1.711f8ep-33f, -0x1.821fdap-58f, +0x1.116302p-84f },   // 1079/1024
    { +0x1.868a84p-5f, -0x1.ef8126p-30f, -0x1.1d09a6p-57f, +0x1.396d78p-82f },   // 1074/1024
    { +0x1.67f95p-5f, -0x1.ed684cp-30f, -0x1.f060cp-55f, -0x1.b1294ep-80f },   // 1070/1024
    { +0x1.494accp-5f, +0x1.a6c88ep-32f, +0x1.e295cp-59f, -0x1.6dc668p-84f },   // 1066/1024
    { +0x1.22c71cp-5f, -0x1.8abe2ep-32f, +0x1.031f1p-57f, -0x1.ddc3eap-86f },   // 1061/1024
    { +0x1.03d5d8p-5f, +0x1.79cfbcp-31f, -0x1.da7c4cp-58f, +0x1.4e7584p-83f },   // 1057/1024
    { +0x1.c98d18p-6f, +0x1.a01902p-31f, +0x1.eafa76p-57f, +0x1.0786d2p-84f },   // 1053/1024
    { +0x1.8b31fap-6f, +0x1.953602p-31f, -0x1.e2a5bap-58f, +0x1.b4decep-83f },   // 1049/1024
    { +0x1.3cea44p-6f, +0x1.a352bap-33f, +0x1.de694ap-59f, +0x1.bf5318p-84f },   // 1044/1024
    { +0x1.fc0a8cp-7f, -0x1.e07f84p-32f, +0x1.e7cf6ep-58f, -0x1.8b2c86p-83f },   // 1040/1024
    { +0x1.7dc476p-7f, -0x1.fbd624p-37f, -0x1.16d768p-62f, -0x1.f4f7c8p-88f },   // 1036/1024
    { +0x1.fe02a6p-8f, +0x1.620cf2p-33f, -0x1.c0f226p-58f, +0x1.0391dcp-84f },   // 1032/1024
    { +0x1.ff00aap-9f, +0x1.5885ep-36f, +0x1.2821aep-63f, -0x1.4b2596p-88f },   // 1028/1024
    { 0.0f, 0.0f, 0.0f, 0.0f }   // 1024/1024
};

double bd0(double x, double np)
{
    if (!isfinite(x) || !isfinite(np) || np == 0.0)
        ML_WARN_return_NAN;
    if (fabs(x - np) < 0.1 * (x + np)) {
        double v = (x - np) / (x + np);
        double s = (x - np) * v;
        if (fabs(s) < DBL_MIN)
            return s;
        double ej = 2 * x * v;
        v *= v;
        for (int j = 1; j < 1000; j++) {   // the terms fall by v^2 < 1/100 each
            ej *= v;
            double s1 = s + ej / ((j << 1) + 1);
            if (s1 == s)
                return s1;
            s = s1;
        }
    }
    return x * log(x / np) + np - x;
}

// Add d to the pair (yh, yl): its nearest integer to yh, the rest (in [-1/2, 1/2]) to yl.
static inline void ebd0_add(double d, double *yh, double *yl)
{
    double d1 = floor(d + 0.5);
    *yh += d1;
    *yl += d - d1;
}

void ebd0(double x, double M, double *yh, double *yl)
{
    const int Sb = 10;
    const double S = 1024.;   // 2^Sb
    const int N = 128;        // the table has N + 1 rows

    *yl = *yh = 0;
    if (x == M)
        return;
    if (x == 0) {
        *yh = M;
        return;
    }
    if (M == 0) {
        *yh = ML_POSINF;
        return;
    }
    if (M / x == ML_POSINF) {
        *yh = M;
        return;
    }

    int e;
    double r = frexp(M / x, &e);   // M/x = r 2^e, r in [1/2, 1)
    if (M_LN2 * ((double)-e) > 1. + DBL_MAX / x) {
        *yh = ML_POSINF;           // x log(x/M) overflows
        return;
    }
    int i = (int)floor((r - 0.5) * (2 * N) + 0.5);   // 0 <= i <= N
    double f = floor(S / (0.5 + i / (2.0 * N)) + 0.5);
    double fg = ldexp(f, -(e + Sb));                 // ~ x/M
    if (fg == ML_POSINF) {
        *yh = fg;
        return;
    }

    ebd0_add(-x * log1pmx((M * fg - x) / x), yh, yl);
    if (fg == 1)
        return;
    for (int j = 0; j < 4; j++) {
        ebd0_add(x * ebd0_scale[i][j], yh, yl);        // x log(f/1024)
        ebd0_add(-x * e * ebd0_scale[0][j], yh, yl);   // -x e log 2
        if (!isfinite(*yh)) {
            *yh = ML_POSINF;
            *yl = 0;
            return;
        }
    }
    ebd0_add(M, yh, yl);
    ebd0_add(-M * fg, yh, yl);
}
