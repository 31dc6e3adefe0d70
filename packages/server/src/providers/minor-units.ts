/**
 * ISO 4217 minor units: how many decimals a currency's amounts carry. The connectors convert our decimal
 * major units to and from their providers' minor units with it, and payments checks an amount's decimals
 * against it (payments/money.ts). It lives here, not in payments, because payments uses providers: providers
 * import nothing of payments.
 */

// ISO 4217 minor units of the active codes that differ from 2. COP is treated as 0, as Yuno and the
// Colombian acquirers do (ISO lists 2, but no centavo amounts are processed).
const MINOR_UNITS_NOT_2: Readonly<Record<string, number>> = {
  BIF: 0, CLP: 0, COP: 0, DJF: 0, GNF: 0, ISK: 0, JPY: 0, KMF: 0, KRW: 0, PYG: 0, RWF: 0, UGX: 0, UYI: 0,
  VND: 0, VUV: 0, XAF: 0, XOF: 0, XPF: 0,
  BHD: 3, IQD: 3, JOD: 3, KWD: 3, LYD: 3, OMR: 3, TND: 3,
  CLF: 4, UYW: 4,
};

// The remaining active ISO 4217 codes (2 minor units).
const TWO_DECIMALS = new Set(
  `AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BMD BND BOB BOV BRL BSD BTN BWP BYN BZD CAD CDF CHE CHF CHW
   CNY COU CRC CUC CUP CVE CZK DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP GEL GHS GIP GMD GTQ GYD HKD HNL HTG HUF IDR ILS
   INR IRR JMD KES KGS KHR KPW KYD KZT LAK LBP LKR LRD LSL MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN MXV MYR MZN
   NAD NGN NIO NOK NPR NZD PAB PEN PGK PHP PKR PLN QAR RON RSD RUB SAR SBD SCR SDG SEK SGD SHP SLE SLL SOS SRD SSP STN
   SVC SYP SZL THB TJS TMT TOP TRY TTD TWD TZS UAH USD USN UYU UZS VED VES WST XCD XCG YER ZAR ZMW ZWG ZWL`.split(/\s+/),
);

/** Minor units of an ISO 4217 currency, or undefined when the code is not one. */
export function minorUnits(currency: string): number | undefined {
  if (currency in MINOR_UNITS_NOT_2) return MINOR_UNITS_NOT_2[currency];
  return TWO_DECIMALS.has(currency) ? 2 : undefined;
}
