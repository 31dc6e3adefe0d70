/**
 * The hosted form's words in English, Spanish and Portuguese. The language is the `lang` query parameter
 * when it names one of these, otherwise the session's country's language, otherwise English. The page
 * embeds the chosen table for its script (no second request, no translation service).
 */
export const LANGUAGES = ['en', 'es', 'pt'] as const;
export type Language = (typeof LANGUAGES)[number];

export interface Messages {
  title: string;
  cardTitle: string;
  enrollTitle: string;
  holder: string;
  number: string;
  expiry: string;
  expiryHint: string;
  securityCode: string;
  pay: string;
  save: string;
  working: string;
  brandDetected: string;
  errorRequired: string;
  errorHolder: string;
  errorNumberDigits: string;
  errorNumberBrand: string;
  errorNumberLength: string;
  errorNumberLuhn: string;
  errorExpiryFormat: string;
  errorExpiryPast: string;
  errorExpiryFar: string;
  errorSecurityCode: string;
  errorSummary: string;
  errorServer: string;
  errorSession: string;
  tokenSent: string;
  saved: string;
  paid: string;
  declined: string;
  pending: string;
  linkTitle: string;
  backToMerchant: string;
  linkAmount: string;
  linkMerchant: string;
  linkUnavailable: string;
  linkCanceled: string;
  linkExpired: string;
  linkPaid: string;
  sessionUnavailable: string;
  tooManyRequests: string;
  notAllowed: string;
}

const en: Messages = {
  title: 'Card payment',
  cardTitle: 'Pay by card',
  enrollTitle: 'Save a card',
  holder: 'Name on card',
  number: 'Card number',
  expiry: 'Expiry date',
  expiryHint: 'MM/YY',
  securityCode: 'Security code',
  pay: 'Pay',
  save: 'Save card',
  working: 'Processing…',
  brandDetected: 'Card brand: {brand}',
  errorRequired: 'This field is required.',
  errorHolder: 'Enter the name as it is on the card.',
  errorNumberDigits: 'A card number has digits only.',
  errorNumberBrand: 'This card brand is not accepted.',
  errorNumberLength: 'A {brand} card number has {lengths} digits.',
  errorNumberLuhn: 'This card number is not valid: check it for a typing mistake.',
  errorExpiryFormat: 'Enter the expiry date as MM/YY.',
  errorExpiryPast: 'This card has expired.',
  errorExpiryFar: 'This expiry date is too far ahead.',
  errorSecurityCode: 'A {brand} card has a {size}-digit security code.',
  errorSummary: 'Please correct the highlighted fields.',
  errorServer: 'The card could not be processed. Please try again.',
  errorSession: 'This checkout is no longer available.',
  tokenSent: 'Card details sent securely.',
  saved: 'Your card was saved.',
  paid: 'Payment approved. Thank you!',
  declined: 'The payment was not approved. You can try another card.',
  pending: 'The payment is being processed. The merchant will confirm it.',
  linkTitle: 'Payment request',
  backToMerchant: 'Return to the merchant',
  linkAmount: 'Amount',
  linkMerchant: 'Merchant',
  linkUnavailable: 'This payment link is not available.',
  linkCanceled: 'This payment link was canceled.',
  linkExpired: 'This payment link has expired.',
  linkPaid: 'This payment link has already been paid.',
  sessionUnavailable: 'This checkout is not available.',
  tooManyRequests: 'Too many requests right now. Please wait a minute and try again.',
  notAllowed: 'This form cannot be shown on this page.',
};

const es: Messages = {
  title: 'Pago con tarjeta',
  cardTitle: 'Pagar con tarjeta',
  enrollTitle: 'Guardar una tarjeta',
  holder: 'Nombre en la tarjeta',
  number: 'Número de tarjeta',
  expiry: 'Fecha de vencimiento',
  expiryHint: 'MM/AA',
  securityCode: 'Código de seguridad',
  pay: 'Pagar',
  save: 'Guardar tarjeta',
  working: 'Procesando…',
  brandDetected: 'Marca de la tarjeta: {brand}',
  errorRequired: 'Este campo es obligatorio.',
  errorHolder: 'Escribe el nombre tal como aparece en la tarjeta.',
  errorNumberDigits: 'El número de tarjeta solo lleva dígitos.',
  errorNumberBrand: 'No se acepta esta marca de tarjeta.',
  errorNumberLength: 'Un número de tarjeta {brand} tiene {lengths} dígitos.',
  errorNumberLuhn: 'El número de tarjeta no es válido: revisa si hay un error de tipeo.',
  errorExpiryFormat: 'Escribe la fecha de vencimiento como MM/AA.',
  errorExpiryPast: 'Esta tarjeta está vencida.',
  errorExpiryFar: 'Esta fecha de vencimiento está demasiado lejos.',
  errorSecurityCode: 'Una tarjeta {brand} tiene un código de seguridad de {size} dígitos.',
  errorSummary: 'Corrige los campos marcados.',
  errorServer: 'No se pudo procesar la tarjeta. Inténtalo de nuevo.',
  errorSession: 'Este pago ya no está disponible.',
  tokenSent: 'Datos de la tarjeta enviados de forma segura.',
  saved: 'Tu tarjeta fue guardada.',
  paid: 'Pago aprobado. ¡Gracias!',
  declined: 'El pago no fue aprobado. Puedes probar con otra tarjeta.',
  pending: 'El pago se está procesando. El comercio lo confirmará.',
  linkTitle: 'Solicitud de pago',
  backToMerchant: 'Volver al comercio',
  linkAmount: 'Importe',
  linkMerchant: 'Comercio',
  linkUnavailable: 'Este enlace de pago no está disponible.',
  linkCanceled: 'Este enlace de pago fue cancelado.',
  linkExpired: 'Este enlace de pago venció.',
  linkPaid: 'Este enlace de pago ya fue pagado.',
  sessionUnavailable: 'Este pago no está disponible.',
  tooManyRequests: 'Demasiadas solicitudes en este momento. Espera un minuto e inténtalo de nuevo.',
  notAllowed: 'Este formulario no se puede mostrar en esta página.',
};

const pt: Messages = {
  title: 'Pagamento com cartão',
  cardTitle: 'Pagar com cartão',
  enrollTitle: 'Salvar um cartão',
  holder: 'Nome impresso no cartão',
  number: 'Número do cartão',
  expiry: 'Validade',
  expiryHint: 'MM/AA',
  securityCode: 'Código de segurança',
  pay: 'Pagar',
  save: 'Salvar cartão',
  working: 'Processando…',
  brandDetected: 'Bandeira do cartão: {brand}',
  errorRequired: 'Este campo é obrigatório.',
  errorHolder: 'Digite o nome como aparece no cartão.',
  errorNumberDigits: 'O número do cartão tem apenas dígitos.',
  errorNumberBrand: 'Esta bandeira de cartão não é aceita.',
  errorNumberLength: 'Um cartão {brand} tem {lengths} dígitos.',
  errorNumberLuhn: 'O número do cartão não é válido: verifique se há erro de digitação.',
  errorExpiryFormat: 'Digite a validade como MM/AA.',
  errorExpiryPast: 'Este cartão está vencido.',
  errorExpiryFar: 'Esta validade está muito distante.',
  errorSecurityCode: 'Um cartão {brand} tem código de segurança de {size} dígitos.',
  errorSummary: 'Corrija os campos destacados.',
  errorServer: 'Não foi possível processar o cartão. Tente novamente.',
  errorSession: 'Este pagamento não está mais disponível.',
  tokenSent: 'Dados do cartão enviados com segurança.',
  saved: 'Seu cartão foi salvo.',
  paid: 'Pagamento aprovado. Obrigado!',
  declined: 'O pagamento não foi aprovado. Você pode tentar outro cartão.',
  pending: 'O pagamento está sendo processado. A loja vai confirmá-lo.',
  linkTitle: 'Pedido de pagamento',
  backToMerchant: 'Voltar para a loja',
  linkAmount: 'Valor',
  linkMerchant: 'Loja',
  linkUnavailable: 'Este link de pagamento não está disponível.',
  linkCanceled: 'Este link de pagamento foi cancelado.',
  linkExpired: 'Este link de pagamento expirou.',
  linkPaid: 'Este link de pagamento já foi pago.',
  sessionUnavailable: 'Este pagamento não está disponível.',
  tooManyRequests: 'Muitas solicitações neste momento. Aguarde um minuto e tente novamente.',
  notAllowed: 'Este formulário não pode ser exibido nesta página.',
};

export const MESSAGES: Readonly<Record<Language, Messages>> = { en, es, pt };

const COUNTRY_LANGUAGE: Readonly<Record<string, Language>> = {
  BR: 'pt',
  AR: 'es', BO: 'es', CL: 'es', CO: 'es', CR: 'es', EC: 'es', SV: 'es', GT: 'es', HN: 'es', MX: 'es', NI: 'es', PA: 'es', PY: 'es', PE: 'es', UY: 'es', ES: 'es',
  PT: 'pt',
};

/** `lang` ("pt", "pt-BR", "es-419") when it is one of ours, else the country's language, else English. */
export function chooseLanguage(lang: unknown, country?: string | null): Language {
  if (typeof lang === 'string') {
    const base = lang.slice(0, 2).toLowerCase();
    if ((LANGUAGES as readonly string[]).includes(base)) return base as Language;
  }
  return (country && COUNTRY_LANGUAGE[country.toUpperCase()]) || 'en';
}

/** "{brand} has {size}" with the values filled in (the browser script has the same helper). */
export function fill(template: string, values: Record<string, string | number>): string {
  return template.replace(/\{(\w+)\}/g, (m, k: string) => (k in values ? String(values[k]) : m));
}

/** Amount as the shopper reads it in their language ("USD 12.50", "R$ 12,50"). */
export function formatAmount(value: number, currency: string, lang: Language): string {
  const locale = lang === 'pt' ? 'pt-BR' : lang === 'es' ? 'es' : 'en-US';
  try {
    return new Intl.NumberFormat(locale, { style: 'currency', currency }).format(value);
  } catch {
    return `${currency} ${value}`;
  }
}
