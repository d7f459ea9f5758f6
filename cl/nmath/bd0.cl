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
// each log(f/1024) being stored as four floats whose sum is exact to ~100 bits.  The table below
// was generated with mpmath: the first three parts are what remains of the logarithm rounded to
// 23 significant bits (so that x * part is exact for integers x up to 2^30, the point of the
// split), the fourth to 24 bits.  This reproduces the table R ships (Welinder's) except for the
// last bits of a few fourth parts, a difference below 1e-33.

// ebd0_scale[i] = log(f_i / 1024),  f_i = round(1024 / (1/2 + i/256)),  i = 0 .. 128
__constant float ebd0_scale[129][4] = {
    { +0x1.62e43p-1f, -0x1.05c61p-29f, -0x1.950d88p-54f, +0x1.d9cc02p-79f },   // 2048/1024
    { +0x1.5ee02cp-1f, -0x1.6dbe98p-25f, -0x1.51e54p-50f, +0x1.2bfa48p-74f },   // 2032/1024
    { +0x1.5ad404p-1f, +0x1.86b3e4p-26f, +0x1.9f6534p-50f, +0x1.54be04p-74f },   // 2016/1024
    { +0x1.570124p-1f, -0x1.9ed75p-25f, -0x1.f37ddp-51f, +0x1.10b77p-77f },   // 2001/1024
    { +0x1.5326e4p-1f, -0x1.9b9874p-25f, -0x1.378194p-49f, +0x1.56feb2p-74f },   // 1986/1024
    { +0x1.4f4528p-1f, +0x1.aca70cp-28f, +0x1.103e74p-53f, +0x1.9c410ap-81f },   // 1971/1024
    { +0x1.4b5bd8p-1f, -0x1.6a91d8p-25f, -0x1.8e43dp-50f, -0x1.afba9ep-77f },   // 1956/1024
    { +0x1.47ae54p-1f, -0x1.abb51cp-25f, +0x1.19b798p-51f, +0x1.45e09cp-76f },   // 1942/1024
    { +0x1.43fap-1f, -0x1.d06318p-25f, -0x1.8858d8p-49f, -0x1.1927c4p-75f },   // 1928/1024
    { +0x1.3ffa4p-1f, +0x1.1a427cp-25f, +0x1.15164p-53f, -0x1.4f5606p-77f },   // 1913/1024
    { +0x1.3c7c8p-1f, -0x1.19bf48p-34f, +0x1.05fc94p-58f, -0x1.c096fcp-82f },   // 1900/1024
    { +0x1.38b32p-1f, +0x1.6b5778p-25f, +0x1.be38dp-50f, -0x1.075e96p-74f },   // 1886/1024
    { +0x1.34e288p-1f, +0x1.d9ce1cp-25f, +0x1.316eb8p-49f, +0x1.2d885cp-73f },   // 1872/1024
    { +0x1.315124p-1f, +0x1.c2fc6p-29f, -0x1.4396fcp-53f, +0x1.acf376p-78f },   // 1859/1024
    { +0x1.2db954p-1f, +0x1.720de4p-25f, -0x1.d39b04p-49f, -0x1.f11176p-76f },   // 1846/1024
    { +0x1.2a1b08p-1f, -0x1.562494p-25f, +0x1.a7863cp-49f, +0x1.85dd64p-73f },   // 1833/1024
    { +0x1.26762p-1f, +0x1.3430ep-29f, -0x1.96a958p-56f, +0x1.f8e636p-82f },   // 1820/1024
    { +0x1.23130cp-1f, +0x1.7bebf4p-25f, +0x1.416f1cp-52f, -0x1.78dd36p-77f },   // 1808/1024
    { +0x1.1faa34p-1f, +0x1.70e128p-26f, +0x1.81817cp-50f, -0x1.c2179cp-76f },   // 1796/1024
    { +0x1.1bf204p-1f, +0x1.3a962p-28f, +0x1.2f94cp-52f, +0x1.9096cp-76f },   // 1783/1024
    { +0x1.187ce4p-1f, -0x1.07787p-27f, +0x1.655a8p-51f, +0x1.eaafd6p-78f },   // 1771/1024
    { +0x1.1501cp-1f, -0x1.406cacp-25f, -0x1.e7229p-49f, +0x1.5dd8p-73f },   // 1759/1024
    { +0x1.11cb8p-1f, +0x1.787cdp-25f, -0x1.efdc78p-51f, -0x1.5380cep-77f },   // 1748/1024
    { +0x1.0e4498p-1f, +0x1.747324p-27f, -0x1.024548p-51f, +0x1.77a5a6p-75f },   // 1736/1024
    { +0x1.0b036cp-1f, +0x1.690c74p-25f, +0x1.5d0cc4p-50f, -0x1.c0e23cp-76f },   // 1725/1024
    { +0x1.07707p-1f, -0x1.a769bcp-27f, +0x1.452234p-52f, +0x1.6ba668p-76f },   // 1713/1024
    { +0x1.04240cp-1f, -0x1.a686acp-27f, -0x1.ef46bp-52f, -0x1.5ce10cp-76f },   // 1702/1024
    { +0x1.00d22cp-1f, +0x1.fc0e1p-25f, +0x1.6ee034p-50f, -0x1.19a2ccp-74f },   // 1691/1024
    { +0x1.faf588p-2f, +0x1.ef1e64p-27f, -0x1.26504cp-54f, -0x1.b15794p-82f },   // 1680/1024
    { +0x1.f4d87cp-2f, +0x1.d7b98p-26f, -0x1.a114d8p-50f, +0x1.9758c6p-75f },   // 1670/1024
    { +0x1.ee1414p-2f, +0x1.2ec06p-26f, +0x1.dc00fcp-52f, +0x1.f8833cp-76f },   // 1659/1024
    { +0x1.e7e32cp-2f, -0x1.ac796cp-27f, -0x1.a68818p-54f, +0x1.235d02p-78f },   // 1649/1024
    { +0x1.e108ap-2f, -0x1.768ba4p-28f, -0x1.f050a8p-52f, +0x1.00d632p-82f },   // 1638/1024
    { +0x1.dac354p-2f, -0x1.d3a6acp-30f, +0x1.18734cp-57f, -0x1.f97902p-83f },   // 1628/1024
    { +0x1.d47424p-2f, +0x1.7dbbacp-31f, -0x1.d5ada4p-56f, +0x1.56fcaap-81f },   // 1618/1024
    { +0x1.ce1afp-2f, +0x1.70be7cp-27f, +0x1.6f6fa4p-51f, +0x1.7955a2p-75f },   // 1608/1024
    { +0x1.c7b798p-2f, +0x1.ec36ecp-26f, -0x1.07e294p-50f, -0x1.ca183cp-75f },   // 1598/1024
    { +0x1.c1ef04p-2f, +0x1.c1dfd4p-26f, +0x1.888eecp-50f, -0x1.fd6b86p-75f },   // 1589/1024
    { +0x1.bb781p-2f, +0x1.478bfcp-26f, +0x1.245b8cp-50f, +0x1.ea9d52p-74f },   // 1579/1024
    { +0x1.b59dap-2f, -0x1.882b08p-27f, +0x1.31573cp-53f, -0x1.8c249ap-77f },   // 1570/1024
    { +0x1.af1294p-2f, -0x1.b710f4p-27f, +0x1.62267p-51f, +0x1.128578p-76f },   // 1560/1024
    { +0x1.a925d4p-2f, -0x1.0ae75p-27f, +0x1.574ed4p-51f, +0x1.084996p-75f },   // 1551/1024
    { +0x1.a3304p-2f, +0x1.027d3p-29f, +0x1.b9a55p-53f, -0x1.b2e38ap-78f },   // 1542/1024
    { +0x1.9d31cp-2f, -0x1.5ec12cp-26f, -0x1.5245ep-52f, +0x1.2522dp-79f },   // 1533/1024
    { +0x1.972a34p-2f, +0x1.135158p-30f, +0x1.a5c09cp-56f, +0x1.24b70ep-80f },   // 1524/1024
    { +0x1.911984p-2f, +0x1.0995d4p-26f, +0x1.3bfb5cp-50f, +0x1.2c9dd6p-75f },   // 1515/1024
    { +0x1.8bad98p-2f, -0x1.1d6144p-29f, +0x1.5b9208p-53f, +0x1.1ec158p-77f },   // 1507/1024
    { +0x1.858b58p-2f, -0x1.1b4678p-27f, +0x1.56cab4p-53f, -0x1.2fdc0cp-78f },   // 1498/1024
    { +0x1.7f5fap-2f, +0x1.3aaf48p-27f, +0x1.461964p-51f, +0x1.4ae476p-75f },   // 1489/1024
    { +0x1.79db68p-2f, -0x1.7e5054p-26f, +0x1.67375p-51f, -0x1.a11f7ap-76f },   // 1481/1024
    { +0x1.744f88p-2f, -0x1.cc0e18p-26f, -0x1.1e9d18p-50f, -0x1.6c06bcp-78f },   // 1473/1024
    { +0x1.6e08ecp-2f, -0x1.5d45ep-26f, -0x1.c73ec8p-50f, +0x1.318d72p-74f },   // 1464/1024
    { +0x1.686c8p-2f, +0x1.e9b14cp-26f, -0x1.13bbd4p-50f, -0x1.efeb1cp-78f },   // 1456/1024
    { +0x1.62c83p-2f, -0x1.a8c70cp-27f, -0x1.5a1214p-51f, -0x1.bab3fcp-79f },   // 1448/1024
    { +0x1.5d1bdcp-2f, -0x1.4fec6cp-31f, +0x1.423638p-56f, +0x1.ee3ffp-83f },   // 1440/1024
    { +0x1.57677p-2f, +0x1.7455a8p-26f, -0x1.3ab654p-50f, -0x1.26be4cp-75f },   // 1432/1024
    { +0x1.5262ep-2f, -0x1.146778p-26f, -0x1.b9f708p-52f, -0x1.294018p-77f },   // 1425/1024
    { +0x1.4c9f08p-2f, +0x1.e152c4p-26f, -0x1.dde71p-53f, +0x1.fd2208p-77f },   // 1417/1024
    { +0x1.46d2d8p-2f, +0x1.c28058p-26f, -0x1.936284p-50f, +0x1.9fdd68p-74f },   // 1409/1024
    { +0x1.41b94p-2f, +0x1.cce0cp-26f, -0x1.1a405p-50f, +0x1.bc0376p-76f },   // 1402/1024
    { +0x1.3bdd24p-2f, +0x1.d6296cp-27f, +0x1.425b48p-51f, -0x1.cddb2cp-77f },   // 1394/1024
    { +0x1.36b578p-2f, -0x1.287ddcp-27f, -0x1.2d0f4cp-51f, +0x1.38447ep-75f },   // 1387/1024
    { +0x1.31871cp-2f, +0x1.2a883p-27f, +0x1.3eae54p-52f, -0x1.898136p-77f },   // 1380/1024
    { +0x1.2b9304p-2f, -0x1.51d8b8p-28f, +0x1.27694cp-52f, -0x1.fd852ap-76f },   // 1372/1024
    { +0x1.26562p-2f, -0x1.d98f3cp-27f, +0x1.a44338p-51f, -0x1.56e85ep-78f },   // 1365/1024
    { +0x1.211254p-2f, +0x1.98616p-26f, +0x1.73c5dp-51f, +0x1.4a861ep-75f },   // 1358/1024
    { +0x1.1bc794p-2f, +0x1.fa3918p-27f, +0x1.879c5cp-51f, +0x1.16107cp-78f },   // 1351/1024
    { +0x1.1675ccp-2f, -0x1.4545ap-26f, +0x1.c07398p-51f, +0x1.f55c42p-76f },   // 1344/1024
    { +0x1.111ce4p-2f, +0x1.f7267p-37f, -0x1.b84b5cp-61f, +0x1.a4a4d6p-85f },   // 1337/1024
    { +0x1.0c81d4p-2f, +0x1.0c150cp-27f, +0x1.2186p-51f, -0x1.d17312p-76f },   // 1331/1024
    { +0x1.071b84p-2f, +0x1.fcd59p-26f, +0x1.a3a2ep-51f, +0x1.fe5ef8p-76f },   // 1324/1024
    { +0x1.01ade4p-2f, -0x1.bb1844p-28f, +0x1.db3cccp-52f, +0x1.1f56fcp-77f },   // 1317/1024
    { +0x1.fa01c4p-3f, -0x1.12a0dp-29f, -0x1.f71fbp-54f, +0x1.e287a4p-78f },   // 1311/1024
    { +0x1.ef0adcp-3f, +0x1.7b8b28p-28f, -0x1.35bce4p-52f, -0x1.abc8f8p-79f },   // 1304/1024
    { +0x1.e598ecp-3f, +0x1.5a87e4p-27f, -0x1.134bdp-51f, +0x1.c2cebep-76f },   // 1298/1024
    { +0x1.da85d8p-3f, -0x1.df31bp-27f, +0x1.94c16cp-57f, +0x1.8fd7eap-82f },   // 1291/1024
    { +0x1.d0fb8p-3f, -0x1.bb5434p-28f, -0x1.ea564p-52f, -0x1.8ceca4p-77f },   // 1285/1024
    { +0x1.c765b8p-3f, +0x1.e4d68cp-27f, +0x1.5b59b4p-51f, +0x1.76f6c4p-76f },   // 1279/1024
    { +0x1.bdc46cp-3f, -0x1.1cbb5p-27f, +0x1.2da01p-51f, +0x1.eb282cp-75f },   // 1273/1024
    { +0x1.b2798p-3f, -0x1.1b9cep-27f, +0x1.7756f8p-52f, +0x1.2ff572p-76f },   // 1266/1024
    { +0x1.a8bedp-3f, -0x1.bbe874p-30f, +0x1.85cf2p-56f, +0x1.b9cf18p-80f },   // 1260/1024
    { +0x1.9ef83cp-3f, +0x1.2769a4p-27f, -0x1.85bdap-52f, +0x1.8c8018p-79f },   // 1254/1024
    { +0x1.9525a8p-3f, +0x1.cf456cp-27f, -0x1.7137d8p-52f, -0x1.f158e8p-76f },   // 1248/1024
    { +0x1.8b46f8p-3f, +0x1.11b12cp-30f, +0x1.9f2104p-54f, -0x1.22836ep-78f },   // 1242/1024
    { +0x1.83040cp-3f, +0x1.2379e4p-28f, +0x1.b71c7p-52f, -0x1.990cdep-76f },   // 1237/1024
    { +0x1.790ed4p-3f, +0x1.dc4c68p-28f, -0x1.910ac8p-52f, +0x1.dd1bd6p-76f },   // 1231/1024
    { +0x1.6f0d28p-3f, +0x1.5cad68p-28f, +0x1.737c94p-52f, -0x1.9184bap-77f },   // 1225/1024
    { +0x1.64fee8p-3f, +0x1.04bf88p-28f, +0x1.6fca28p-52f, +0x1.8884a8p-76f },   // 1219/1024
    { +0x1.5c94p-3f, +0x1.d65cbp-29f, -0x1.b2919cp-53f, +0x1.b99bcep-77f },   // 1214/1024
    { +0x1.526e6p-3f, -0x1.c5e4bcp-27f, -0x1.0ba38p-52f, +0x1.d6e3ccp-79f },   // 1208/1024
    { +0x1.483bccp-3f, +0x1.9cdc7cp-28f, -0x1.5ad8dcp-54f, -0x1.392d38p-83f },   // 1202/1024
    { +0x1.3fb25cp-3f, -0x1.a6ad74p-27f, +0x1.5be6b4p-52f, -0x1.4e0114p-77f },   // 1197/1024
    { +0x1.371fc4p-3f, -0x1.fe1708p-27f, -0x1.78864cp-52f, -0x1.27543ap-76f },   // 1192/1024
    { +0x1.2cca1p-3f, -0x1.4141b4p-28f, -0x1.ef191cp-52f, +0x1.00ee08p-76f },   // 1186/1024
    { +0x1.24231p-3f, +0x1.3ba51p-27f, -0x1.d003c8p-51f, +0x1.16264p-76f },   // 1181/1024
    { +0x1.1b72acp-3f, +0x1.52f67cp-27f, -0x1.fd6fap-51f, +0x1.1a3966p-77f },   // 1176/1024
    { +0x1.10f8e4p-3f, +0x1.129cd8p-30f, +0x1.31ef3p-55f, +0x1.a73e36p-79f },   // 1170/1024
    { +0x1.08338cp-3f, -0x1.005d7cp-27f, -0x1.661a9cp-51f, +0x1.1f138ap-79f },   // 1165/1024
    { +0x1.fec914p-4f, -0x1.c482a8p-29f, -0x1.55746cp-54f, +0x1.99f932p-80f },   // 1160/1024
    { +0x1.ed1794p-4f, +0x1.d06fp-29f, +0x1.75e45cp-53f, -0x1.d0483ep-78f },   // 1155/1024
    { +0x1.db527p-4f, +0x1.87d928p-32f, -0x1.0f52a4p-57f, +0x1.81f4acp-84f },   // 1150/1024
    { +0x1.c97978p-4f, +0x1.af1d24p-29f, -0x1.0977dp-60f, -0x1.8839cap-84f },   // 1145/1024
    { +0x1.b78c84p-4f, -0x1.44f124p-28f, -0x1.ef7bc4p-52f, +0x1.9e065p-78f },   // 1140/1024
    { +0x1.a58b6p-4f, +0x1.856464p-29f, +0x1.c651dp-55f, +0x1.b06b0cp-79f },   // 1135/1024
    { +0x1.9375e4p-4f, +0x1.5595ecp-28f, +0x1.dc3738p-52f, +0x1.86c89cp-81f },   // 1130/1024
    { +0x1.814be4p-4f, -0x1.c073fcp-28f, -0x1.371f88p-53f, -0x1.5f408p-77f },   // 1125/1024
    { +0x1.6f0d28p-4f, +0x1.5cad68p-29f, +0x1.737c94p-53f, -0x1.9184bap-78f },   // 1120/1024
    { +0x1.60658cp-4f, -0x1.6c8af4p-28f, +0x1.d8ef74p-55f, +0x1.c4f792p-80f },   // 1116/1024
    { +0x1.4e011p-4f, +0x1.146b5cp-29f, +0x1.73f7ccp-54f, -0x1.d28db8p-79f },   // 1111/1024
    { +0x1.3b8758p-4f, +0x1.8b1b7p-28f, -0x1.20aca4p-52f, -0x1.651894p-76f },   // 1106/1024
    { +0x1.28f834p-4f, +0x1.43b6a4p-30f, -0x1.452af8p-55f, +0x1.976892p-80f },   // 1101/1024
    { +0x1.1a0fbcp-4f, -0x1.e4075cp-28f, +0x1.1fe618p-52f, +0x1.9d6dc2p-77f },   // 1097/1024
    { +0x1.075984p-4f, -0x1.4ce37p-29f, -0x1.d9fc98p-53f, +0x1.4ccf12p-77f },   // 1092/1024
    { +0x1.f0a30cp-5f, +0x1.162a68p-37f, -0x1.e83368p-61f, -0x1.d2229ap-86f },   // 1088/1024
    { +0x1.cae73p-5f, -0x1.1a8f7cp-31f, -0x1.5f9014p-55f, +0x1.2720cp-79f },   // 1083/1024
    { +0x1.ac9724p-5f, -0x1.e8ee08p-29f, +0x1.a7de04p-54f, -0x1.9bba74p-78f },   // 1079/1024
    { +0x1.868a84p-5f, -0x1.ef8128p-30f, +0x1.dc5eccp-54f, -0x1.58d25p-79f },   // 1074/1024
    { +0x1.67f95p-5f, -0x1.ed684cp-30f, -0x1.f060cp-55f, -0x1.b1294ep-80f },   // 1070/1024
    { +0x1.494accp-5f, +0x1.a6c89p-32f, -0x1.c3ad48p-56f, -0x1.6dc668p-84f },   // 1066/1024
    { +0x1.22c71cp-5f, -0x1.8abe2cp-32f, -0x1.7e7078p-56f, -0x1.ddc3eap-86f },   // 1061/1024
    { +0x1.03d5d8p-5f, +0x1.79cfbcp-31f, -0x1.da7c4cp-58f, +0x1.4e7584p-83f },   // 1057/1024
    { +0x1.c98d18p-6f, +0x1.a01904p-31f, -0x1.854164p-55f, +0x1.883c36p-79f },   // 1053/1024
    { +0x1.8b31fcp-6f, -0x1.3565p-30f, +0x1.c3ab48p-55f, +0x1.b69bdap-80f },   // 1049/1024
    { +0x1.3cea44p-6f, +0x1.a352bcp-33f, -0x1.8865acp-57f, -0x1.48159ep-81f },   // 1044/1024
    { +0x1.fc0a8cp-7f, -0x1.e07f84p-32f, +0x1.e7cf6cp-58f, +0x1.3a69bep-82f },   // 1040/1024
    { +0x1.7dc474p-7f, +0x1.f810a8p-31f, -0x1.245b5cp-56f, -0x1.a1f4f8p-80f },   // 1036/1024
    { +0x1.fe02a8p-8f, -0x1.4ef988p-32f, +0x1.1f86ecp-57f, +0x1.20723cp-81f },   // 1032/1024
    { +0x1.ff00acp-9f, -0x1.d4ef44p-33f, +0x1.2821acp-63f, +0x1.5a6d36p-87f },   // 1028/1024
    { 0.0f, 0.0f, 0.0f, 0.0f }   // 1024/1024
};

NMATH_NOINLINE double bd0(double x, double np)
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

NMATH_NOINLINE void ebd0(double x, double M, double *yh, double *yl)
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
        ebd0_add(-x * ebd0_scale[0][j] * e, yh, yl);   // -x e log 2 (e last: no overflow)
        if (!isfinite(*yh)) {
            *yh = ML_POSINF;
            *yl = 0;
            return;
        }
    }
    ebd0_add(M, yh, yl);
    ebd0_add(-M * fg, yh, yl);
}
