//! Response languages and the translated error messages.
//!
//! The platform ships English, Spanish and Portuguese (contract.md, Errors). A client chooses
//! with the `language` query parameter, as a two-letter code or a culture (`es-AR`, `pt_BR`);
//! an unsupported one is [`ErrorCode::LanguageNotSupported`] for the caller to raise.

use std::fmt;

use crate::error::{ApiError, ErrorCode};

/// A language the platform answers in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Language {
    /// English, the default when no tenant default is configured.
    #[default]
    En,
    /// Spanish.
    Es,
    /// Portuguese.
    Pt,
}

impl Language {
    /// Every supported language.
    pub const ALL: [Language; 3] = [Language::En, Language::Es, Language::Pt];

    /// Reads a two-letter code or a culture, in any case, with `-` or `_` between the
    /// subtags: `en`, `EN`, `es-AR`, `pt_BR`, `es-419`. The first subtag decides; later ones
    /// must be 1 to 8 letters or digits but are otherwise ignored. Anything else, including an
    /// empty value and languages the platform does not ship (`fr`, `xx-YY`), is `None`.
    pub fn parse(value: &str) -> Option<Language> {
        let mut subtags = value.split(['-', '_']);
        let primary = subtags.next()?;
        let language = match primary.to_ascii_lowercase().as_str() {
            "en" => Language::En,
            "es" => Language::Es,
            "pt" => Language::Pt,
            _ => return None,
        };
        let well_formed = subtags.all(|subtag| {
            (1..=8).contains(&subtag.len()) && subtag.chars().all(|c| c.is_ascii_alphanumeric())
        });
        well_formed.then_some(language)
    }

    /// The two-letter code, as the WIT `context.language` carries it: `"en"`, `"es"`, `"pt"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Language::En => "en",
            Language::Es => "es",
            Language::Pt => "pt",
        }
    }

    /// Position in the per-code translation tables.
    const fn index(self) -> usize {
        match self {
            Language::En => 0,
            Language::Es => 1,
            Language::Pt => 2,
        }
    }
}

impl fmt::Display for Language {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl ApiError {
    /// The human message of the error body, in `language`.
    ///
    /// [`ErrorCode::ModelNotValid`] names its field ("The field 'limit' is not valid"); other
    /// codes mention the field in parentheses when there is one. The technical `detail`, when
    /// present, follows after a colon, untranslated.
    pub fn message(&self, language: Language) -> String {
        let mut message = match (&self.field, self.code) {
            (Some(field), ErrorCode::ModelNotValid) => match language {
                Language::En => format!("The field '{field}' is not valid"),
                Language::Es => format!("El campo '{field}' no es válido"),
                Language::Pt => format!("O campo '{field}' não é válido"),
            },
            (Some(field), code) => {
                let label = match language {
                    Language::En => "field",
                    Language::Es | Language::Pt => "campo",
                };
                format!("{} ({label}: {field})", code_message(code, language))
            }
            (None, code) => code_message(code, language).to_owned(),
        };
        if let Some(detail) = &self.detail {
            message.push_str(": ");
            message.push_str(detail);
        }
        message
    }
}

/// The message of a code on its own, in `language`.
pub fn code_message(code: ErrorCode, language: Language) -> &'static str {
    texts(code)[language.index()]
}

/// English, Spanish and Portuguese messages of a code, in that order.
fn texts(code: ErrorCode) -> [&'static str; 3] {
    use ErrorCode as C;
    match code {
        C::NoError => ["No error", "Sin error", "Nenhum erro"],
        C::CustomerNotFound => [
            "The customer was not found",
            "No se encontró el cliente",
            "O cliente não foi encontrado",
        ],
        C::CarNotFound => [
            "The car was not found",
            "No se encontró el vehículo",
            "O veículo não foi encontrado",
        ],
        C::CarNotAvailable => [
            "The car is not available for the requested dates",
            "El vehículo no está disponible para las fechas solicitadas",
            "O veículo não está disponível para as datas solicitadas",
        ],
        C::PriceMismatch => [
            "The price sent differs from the computed price",
            "El precio enviado difiere del precio calculado",
            "O preço enviado difere do preço calculado",
        ],
        C::CustomerDataNotValid => [
            "The customer data is not valid",
            "Los datos del cliente no son válidos",
            "Os dados do cliente não são válidos",
        ],
        C::LanguageNotSupported => [
            "The language is not supported",
            "El idioma no está soportado",
            "O idioma não é suportado",
        ],
        C::InsuficientPermissions => [
            "The user does not have permission for this operation",
            "El usuario no tiene permiso para esta operación",
            "O usuário não tem permissão para esta operação",
        ],
        C::BookingNotFoundForCustomer => [
            "No booking was found for the customer",
            "No se encontró ninguna reserva para el cliente",
            "Nenhuma reserva foi encontrada para o cliente",
        ],
        C::BookingStatusNotAllowCancel => [
            "The booking status does not allow cancellation",
            "El estado de la reserva no permite cancelarla",
            "O status da reserva não permite o cancelamento",
        ],
        C::CreditCardNotAvailable => [
            "The credit card is not available",
            "La tarjeta de crédito no está disponible",
            "O cartão de crédito não está disponível",
        ],
        C::GatewayNotSupported => [
            "The payment gateway is not supported",
            "La pasarela de pago no está soportada",
            "O gateway de pagamento não é suportado",
        ],
        C::InfractionNotFound => [
            "The infraction was not found",
            "No se encontró la infracción",
            "A infração não foi encontrada",
        ],
        C::InvlaidDates => [
            "The dates are not valid",
            "Las fechas no son válidas",
            "As datas não são válidas",
        ],
        C::UnquotedReserve => [
            "The reservation has not been quoted",
            "La reserva no fue cotizada",
            "A reserva não foi cotada",
        ],
        C::MaxDayForQuotedReserve => [
            "The maximum number of days for a quoted reservation was exceeded",
            "Se superó la cantidad máxima de días para una reserva cotizada",
            "O número máximo de dias para uma reserva cotada foi excedido",
        ],
        C::TariffNotFound => [
            "No tariff was found",
            "No se encontró la tarifa",
            "A tarifa não foi encontrada",
        ],
        C::BookingNotFound => [
            "The booking was not found",
            "No se encontró la reserva",
            "A reserva não foi encontrada",
        ],
        C::ReturnPlaceNotFound => [
            "The return place was not found",
            "No se encontró el lugar de devolución",
            "O local de devolução não foi encontrado",
        ],
        C::PromotionNotFound => [
            "The promotion was not found",
            "No se encontró la promoción",
            "A promoção não foi encontrada",
        ],
        C::DeliveryPlaceNotFound => [
            "The delivery place was not found",
            "No se encontró el lugar de entrega",
            "O local de entrega não foi encontrado",
        ],
        C::BookingStatusNotAllowUpdate => [
            "The booking status does not allow changes",
            "El estado de la reserva no permite modificarla",
            "O status da reserva não permite alterações",
        ],
        C::IlimitedKmNotEnabled => [
            "Unlimited kilometres are not enabled",
            "El kilometraje ilimitado no está habilitado",
            "A quilometragem ilimitada não está habilitada",
        ],
        C::LimitedKmNotEnabled => [
            "Limited kilometres are not enabled",
            "El kilometraje limitado no está habilitado",
            "A quilometragem limitada não está habilitada",
        ],
        C::MinimunDaysOfBookingNotReached => [
            "The booking does not reach the minimum number of days",
            "La reserva no alcanza la cantidad mínima de días",
            "A reserva não atinge o número mínimo de dias",
        ],
        C::MaxDaysOfBookingReached => [
            "The booking exceeds the maximum number of days",
            "La reserva supera la cantidad máxima de días",
            "A reserva excede o número máximo de dias",
        ],
        C::AdditionalNotFound => [
            "The additional was not found",
            "No se encontró el adicional",
            "O adicional não foi encontrado",
        ],
        C::AdditionalMaxQuantityExceeded => [
            "The maximum quantity of the additional was exceeded",
            "Se superó la cantidad máxima del adicional",
            "A quantidade máxima do adicional foi excedida",
        ],
        C::DateFromForBookingNotEnabled => [
            "The start date is not enabled for bookings",
            "La fecha de inicio no está habilitada para reservas",
            "A data de início não está habilitada para reservas",
        ],
        C::DriverAgeNotAllowed => [
            "The driver's age is outside the allowed range",
            "La edad del conductor está fuera del rango permitido",
            "A idade do motorista está fora da faixa permitida",
        ],
        C::BookingVersionError => [
            "The booking version does not match the stored booking",
            "La versión de la reserva no coincide con la reserva guardada",
            "A versão da reserva não corresponde à reserva armazenada",
        ],
        C::BookingAlreadyDelivered => [
            "The booking was already delivered",
            "La reserva ya fue entregada",
            "A reserva já foi entregue",
        ],
        C::BookingAlreadyReturned => [
            "The booking was already returned",
            "La reserva ya fue devuelta",
            "A reserva já foi devolvida",
        ],
        C::BookingNeedsToCompleteDeposit => [
            "The booking needs its deposit to be completed",
            "La reserva requiere completar el depósito",
            "A reserva precisa completar o depósito",
        ],
        C::InvalidCarKilometers => [
            "The car's kilometres are not valid",
            "El kilometraje del vehículo no es válido",
            "A quilometragem do veículo não é válida",
        ],
        C::BookingStatusNotAllowDelivery => [
            "The booking status does not allow delivery",
            "El estado de la reserva no permite la entrega",
            "O status da reserva não permite a entrega",
        ],
        C::DriverLicenseInvalid => [
            "The driver's licence is not valid",
            "La licencia de conducir no es válida",
            "A carteira de habilitação não é válida",
        ],
        C::BookingStatusNotAllowReturn => [
            "The booking status does not allow return",
            "El estado de la reserva no permite la devolución",
            "O status da reserva não permite a devolução",
        ],
        C::NotificationRelatedEntityNotFound => [
            "The entity related to the notification was not found",
            "No se encontró la entidad relacionada con la notificación",
            "A entidade relacionada à notificação não foi encontrada",
        ],
        C::NotificationReceiverAddressInvalid => [
            "The notification receiver's address is not valid",
            "La dirección del destinatario de la notificación no es válida",
            "O endereço do destinatário da notificação não é válido",
        ],
        C::MailNotificationDisabled => [
            "Mail notifications are disabled",
            "Las notificaciones por correo están deshabilitadas",
            "As notificações por e-mail estão desativadas",
        ],
        C::ReturnPlaceNotAllowedForDeliveryPlace => [
            "The return place is not allowed for the delivery place",
            "El lugar de devolución no está permitido para el lugar de entrega",
            "O local de devolução não é permitido para o local de entrega",
        ],
        C::BookingOutOfOfficeHoursNotAllowed => [
            "Bookings outside office hours are not allowed",
            "No se permiten reservas fuera del horario de atención",
            "Não são permitidas reservas fora do horário de atendimento",
        ],
        C::NotificationNotFound => [
            "The notification was not found",
            "No se encontró la notificación",
            "A notificação não foi encontrada",
        ],
        C::BlockedCustomerToBook => [
            "The customer is blocked from booking",
            "El cliente tiene bloqueadas las reservas",
            "O cliente está bloqueado para fazer reservas",
        ],
        C::MustHaveAtLeastOneInsurance => [
            "The booking must include at least one insurance",
            "La reserva debe incluir al menos un seguro",
            "A reserva deve incluir pelo menos um seguro",
        ],
        C::InvalidCommercialAgreement => [
            "The commercial agreement is not valid",
            "El acuerdo comercial no es válido",
            "O acordo comercial não é válido",
        ],
        C::AppProtocolNotFound => [
            "The application protocol was not found",
            "No se encontró el protocolo de la aplicación",
            "O protocolo da aplicação não foi encontrado",
        ],
        C::ServiceTypeInvalid => [
            "The service type is not valid",
            "El tipo de servicio no es válido",
            "O tipo de serviço não é válido",
        ],
        C::ServiceStatusInvalid => [
            "The service status is not valid",
            "El estado del servicio no es válido",
            "O status do serviço não é válido",
        ],
        C::ServiceDatesInvalids => [
            "The service dates are not valid",
            "Las fechas del servicio no son válidas",
            "As datas do serviço não são válidas",
        ],
        C::ServiceProviderNotFound => [
            "The service provider was not found",
            "No se encontró el proveedor del servicio",
            "O prestador do serviço não foi encontrado",
        ],
        C::ServiceCanNotCreate => [
            "The service cannot be created",
            "No se puede crear el servicio",
            "Não é possível criar o serviço",
        ],
        C::ServiceCanNotEdit => [
            "The service cannot be edited",
            "No se puede editar el servicio",
            "Não é possível editar o serviço",
        ],
        C::ServiceNotFound => [
            "The service was not found",
            "No se encontró el servicio",
            "O serviço não foi encontrado",
        ],
        C::CarLocationInvalidDriver => [
            "The car location has an invalid driver",
            "La ubicación del vehículo tiene un conductor no válido",
            "A localização do veículo tem um motorista inválido",
        ],
        C::ReturnPlaceIsCurrentPlaceError => [
            "The return place is the car's current place",
            "El lugar de devolución es el lugar actual del vehículo",
            "O local de devolução é o local atual do veículo",
        ],
        C::CarIsNotFree => [
            "The car is not free for this operation",
            "El vehículo no está libre para esta operación",
            "O veículo não está livre para esta operação",
        ],
        C::CarTransferError => [
            "The car transfer failed",
            "Se produjo un error en el traslado del vehículo",
            "Ocorreu um erro na transferência do veículo",
        ],
        C::InvalidCarGasoline => [
            "The car's fuel level is not valid",
            "El nivel de combustible del vehículo no es válido",
            "O nível de combustível do veículo não é válido",
        ],
        C::CannotDeliverBookingWithBalance => [
            "The booking cannot be delivered while it has an outstanding balance",
            "No se puede entregar una reserva con saldo pendiente",
            "Não é possível entregar uma reserva com saldo pendente",
        ],
        C::PlaceDoesNotAcceptCustomAddresses => [
            "The place does not accept custom addresses",
            "El lugar no acepta direcciones personalizadas",
            "O local não aceita endereços personalizados",
        ],
        C::PlaceCantOperatesLikePickUp => [
            "The place cannot be used for pick-up",
            "El lugar no puede usarse para el retiro",
            "O local não pode ser usado para retirada",
        ],
        C::PlaceCantOperatesLikeDropOff => [
            "The place cannot be used for drop-off",
            "El lugar no puede usarse para la devolución",
            "O local não pode ser usado para devolução",
        ],
        C::CannotPayQuote => [
            "A quotation cannot be paid",
            "No se puede pagar una cotización",
            "Não é possível pagar uma cotação",
        ],
        C::FeatureNotEnabled => [
            "The feature is not enabled",
            "La funcionalidad no está habilitada",
            "A funcionalidade não está habilitada",
        ],
        C::ModelNotValid => [
            "The request is not valid",
            "La solicitud no es válida",
            "A solicitação não é válida",
        ],
        C::Unknown => [
            "An unexpected error occurred",
            "Se produjo un error inesperado",
            "Ocorreu um erro inesperado",
        ],
        C::MissingCurrencyCode => [
            "The currency code is missing",
            "Falta el código de moneda",
            "O código da moeda está ausente",
        ],
        C::TotalGreaterThanZero => [
            "The total must be greater than zero",
            "El total debe ser mayor que cero",
            "O total deve ser maior que zero",
        ],
        C::InfractionAlreadyExists => [
            "The infraction record already exists",
            "El registro de la infracción ya existe",
            "O registro da infração já existe",
        ],
        C::InvalidIncidentType => [
            "The incident type is not valid",
            "El tipo de incidente no es válido",
            "O tipo de incidente não é válido",
        ],
        C::InvalidIncidentDate => [
            "The incident date is not valid",
            "La fecha del incidente no es válida",
            "A data do incidente não é válida",
        ],
        C::SettingNotFound => [
            "A required setting was not found",
            "No se encontró una configuración requerida",
            "Uma configuração obrigatória não foi encontrada",
        ],
        C::BookingBrandNotFound => [
            "The booking brand was not found",
            "No se encontró la marca de la reserva",
            "A marca da reserva não foi encontrada",
        ],
        C::BookingCannotBeUncancelled => [
            "The canceled booking cannot be reactivated",
            "La reserva cancelada no puede reactivarse",
            "A reserva cancelada não pode ser reativada",
        ],
        C::RateAlreadyExists => [
            "A rate with this code already exists",
            "Ya existe una tarifa con este código",
            "Já existe uma tarifa com este código",
        ],
        C::DuplicateCustomerGlobalId => [
            "More than one customer shares the same GlobalId",
            "Más de un cliente comparte el mismo GlobalId",
            "Mais de um cliente compartilha o mesmo GlobalId",
        ],
        C::AgencyNotConfigured => [
            "No agency is configured for the commercial agreement",
            "No hay una agencia configurada para el acuerdo comercial",
            "Nenhuma agência está configurada para o acordo comercial",
        ],
        C::Timeout => [
            "The request took too long to complete",
            "La solicitud tardó demasiado en completarse",
            "A solicitação demorou demais para ser concluída",
        ],
        C::MappingAlreadyExists => [
            "The mapping already exists",
            "La asociación ya existe",
            "O mapeamento já existe",
        ],
        C::ModelNotExists => [
            "The car model does not exist",
            "El modelo de vehículo no existe",
            "O modelo de veículo não existe",
        ],
        C::CompanyCodeNotFound => [
            "The company code was not found",
            "No se encontró el código de empresa",
            "O código da empresa não foi encontrado",
        ],
        C::CommercialAgreementNotSupported => [
            "The commercial agreement is not supported",
            "El acuerdo comercial no está soportado",
            "O acordo comercial não é suportado",
        ],
        C::CommercialAgreementRequired => [
            "A commercial agreement is required",
            "Se requiere un acuerdo comercial",
            "É necessário um acordo comercial",
        ],
        C::InfractionNoticeNotFound => [
            "The infraction notice is not recognised",
            "No se reconoce el aviso de infracción",
            "O auto de infração não foi reconhecido",
        ],
        C::InfractionNoticeDismissed => [
            "The infraction notice is archived and cannot be linked",
            "El aviso de infracción está archivado y no puede vincularse",
            "O auto de infração está arquivado e não pode ser vinculado",
        ],
        C::InfractionNoticeContextMismatch => [
            "The infraction does not match the notice (car, date, booking or driver)",
            "La infracción no coincide con el aviso (vehículo, fecha, reserva o conductor)",
            "A infração não corresponde ao auto (veículo, data, reserva ou motorista)",
        ],
        C::InfractionNoticeMainAlreadyLinked => [
            "The notice already has a main infraction linked",
            "El aviso ya tiene vinculada una infracción principal",
            "O auto já tem uma infração principal vinculada",
        ],
        C::InfractionNoticeNicAlreadyLinked => [
            "The notice already has a driver non-identification infraction linked",
            "El aviso ya tiene vinculada una infracción por no identificación del conductor",
            "O auto já tem uma infração por não identificação do condutor vinculada",
        ],
        C::InfractionNoticeInfractionAlreadyLinked => [
            "The infraction is already linked to another notice",
            "La infracción ya está vinculada a otro aviso",
            "A infração já está vinculada a outro auto",
        ],
        C::PriceAgreementNotFound => [
            "The price agreement was not found",
            "No se encontró el acuerdo de precios",
            "O acordo de preços não foi encontrado",
        ],
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    #[test]
    fn two_letter_codes_in_any_case() {
        assert_eq!(Language::parse("en"), Some(Language::En));
        assert_eq!(Language::parse("EN"), Some(Language::En));
        assert_eq!(Language::parse("Es"), Some(Language::Es));
        assert_eq!(Language::parse("pT"), Some(Language::Pt));
    }

    #[test]
    fn cultures_with_dash_or_underscore() {
        assert_eq!(Language::parse("es-AR"), Some(Language::Es));
        assert_eq!(Language::parse("es_ar"), Some(Language::Es));
        assert_eq!(Language::parse("pt_BR"), Some(Language::Pt));
        assert_eq!(Language::parse("PT-br"), Some(Language::Pt));
        assert_eq!(Language::parse("en-US"), Some(Language::En));
        assert_eq!(Language::parse("es-419"), Some(Language::Es));
    }

    #[test]
    fn unsupported_or_malformed_languages() {
        for value in [
            "",
            "fr",
            "fr-FR",
            "xx-YY",
            "e",
            "eng",
            "es-",
            "-es",
            "es--AR",
            "es AR",
            " es",
            "es.AR",
            "es-toolongsubtag",
        ] {
            assert_eq!(Language::parse(value), None, "{value:?}");
        }
    }

    #[test]
    fn as_str_round_trips() {
        for language in Language::ALL {
            assert_eq!(Language::parse(language.as_str()), Some(language));
            assert_eq!(language.to_string(), language.as_str());
        }
        assert_eq!(Language::default(), Language::En);
    }

    #[test]
    fn every_code_has_three_distinct_messages() {
        for &code in ErrorCode::ALL {
            let messages: Vec<&str> = Language::ALL
                .iter()
                .map(|&language| code_message(code, language))
                .collect();
            for message in &messages {
                assert!(!message.trim().is_empty(), "{code:?}");
            }
            let distinct: HashSet<&&str> = messages.iter().collect();
            assert_eq!(distinct.len(), 3, "{code:?}: {messages:?}");
        }
    }

    #[test]
    fn messages_differ_between_codes() {
        for language in Language::ALL {
            let distinct: HashSet<&str> = ErrorCode::ALL
                .iter()
                .map(|&code| code_message(code, language))
                .collect();
            assert_eq!(distinct.len(), ErrorCode::ALL.len(), "{language}");
        }
    }

    #[test]
    fn model_not_valid_names_the_field() {
        let error = ApiError::invalid_field("limit", "must be an integer");
        assert_eq!(
            error.message(Language::En),
            "The field 'limit' is not valid: must be an integer"
        );
        assert_eq!(
            error.message(Language::Es),
            "El campo 'limit' no es válido: must be an integer"
        );
        assert_eq!(
            error.message(Language::Pt),
            "O campo 'limit' não é válido: must be an integer"
        );
    }

    #[test]
    fn other_codes_mention_field_and_detail() {
        let error = ApiError::new(ErrorCode::InvlaidDates)
            .with_field("toDate")
            .with_detail("more than 90 days after fromDate");
        assert_eq!(
            error.message(Language::En),
            "The dates are not valid (field: toDate): more than 90 days after fromDate"
        );
        assert_eq!(
            ApiError::new(ErrorCode::BookingNotFound).message(Language::Es),
            "No se encontró la reserva"
        );
        assert_eq!(
            ApiError::new(ErrorCode::ModelNotValid).message(Language::Pt),
            "A solicitação não é válida"
        );
    }
}
